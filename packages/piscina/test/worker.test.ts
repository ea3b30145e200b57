import { describe, expect, it } from 'vitest';
import run from '../src/worker.js';

describe('the production worker', () => {
  it('has no test-only tasks: the testing worker (src/testing-worker.ts) owns them', () => {
    for (const action of ['throw', 'exit', 'sleep'] as const) {
      expect(() => run({ kind: 'test', action } as never)).toThrow(/unknown task kind "test"/);
    }
  });

  it('ignores a fault field on an op task: faults reach only the testing worker', () => {
    expect(run({ kind: 'ping', fault: 'exit' } as never)).toBe('pong');
  });
});
