import { describe, expect, it } from 'vitest';
import { glStackConflict, markGlStackStarted } from '../src/index.js';

describe('GL stacks that cannot share a process', () => {
  it('each one, once started, is the reason the other cannot start; neither blocks itself', () => {
    expect(glStackConflict('headless-gl')).toBeUndefined();
    expect(glStackConflict('dawn-opengles')).toBeUndefined();
    markGlStackStarted('dawn-opengles');
    expect(glStackConflict('headless-gl')).toMatch(/Dawn's OpenGL ES backend .* X error/);
    expect(glStackConflict('dawn-opengles')).toBeUndefined();
    markGlStackStarted('headless-gl');
    expect(glStackConflict('dawn-opengles')).toMatch(/headless-gl .* no OpenGL ES adapter/);
  });

  it('the record is process-wide, so that two copies of this package agree', () => {
    const seen = (globalThis as Record<symbol, unknown>)[Symbol.for('kernelkit.glStacksStarted')];
    expect(seen).toBeInstanceOf(Set);
    expect([...(seen as Set<string>)].sort()).toEqual(['dawn-opengles', 'headless-gl']);
  });
});
