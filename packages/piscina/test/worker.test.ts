import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { WORKER_URL } from '../src/pool.js';
import run from '../src/worker.js';

const execFileAsync = promisify(execFile);
const WORKER_FILE = WORKER_URL.href;
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

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

describe("the worker's module graph", () => {
  // Every worker of every pool loads it at start: the narrow entries keep out @kernelkit/ops'
  // validation, references and workloads and @kernelkit/cpu's backend.
  it('loads the range-kernels and grid-shape entries, not the main entries of @kernelkit/cpu and @kernelkit/ops', async () => {
    const hooks = `data:text/javascript,${encodeURIComponent("export async function load(url, context, next) { if (url.startsWith('file:')) process.stderr.write('LOADED ' + url + '\\n'); return next(url, context); }")}`;
    const script = `import { register } from 'node:module'; register(${JSON.stringify(hooks)}); await import(${JSON.stringify(WORKER_FILE)});`;
    const { stderr } = await execFileAsync(process.execPath, ['--input-type=module', '-e', script], { cwd: PACKAGE_DIR });
    const loaded = stderr
      .split('\n')
      .filter((l) => l.startsWith('LOADED '))
      .map((l) => l.slice('LOADED '.length));
    expect(loaded).toContain(WORKER_FILE);
    const fileOf = (url: string) => realpathSync(fileURLToPath(url));
    const files = loaded.map(fileOf);
    expect(files).toContain(fileOf(import.meta.resolve('@kernelkit/cpu/range-kernels')));
    expect(files).not.toContain(fileOf(import.meta.resolve('@kernelkit/cpu')));
    expect(files).not.toContain(fileOf(import.meta.resolve('@kernelkit/ops')));
  });
});
