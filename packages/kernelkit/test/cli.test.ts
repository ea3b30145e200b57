import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { nativeWarningFilter } from '../src/cli-kit.js';
import { CALIBRATION_FORMAT_VERSION, candidateSet, machineIdentity, machineKey, writeMeasuredChoices } from '../src/router/cache.js';

// The built CLI, as users run it (build first: `npx tsc -p tsconfig.json`).
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const PKG = fileURLToPath(new URL('..', import.meta.url));
const env = { ...process.env, KERNELKIT_BACKEND: '', KERNELKIT_ADAPTER: '' };

function run(args: string[], extraEnv: Record<string, string> = {}, timeout = 120_000) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout, env: { ...env, ...extraEnv }, cwd: PKG });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

describe('argument errors exit with code 2 and name the option', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'kk-cli-'));
  it.each([
    [['grid-search', '--kk', 'abc'], '--kk'],
    [['grid-search', '--kk', '-1'], '--kk'],
    [['grid-search', '--backend', 'cuda'], '--backend'],
    [['grid-search', '--threads', '0'], '--threads'],
    [['grid-search', '--grid', join(tmp, 'missing.txt')], '--grid'],
    [['grid-search', '--backend', 'cpu', '--variant', 'warp'], '--variant'],
    [['grid-search', '--bogus'], '--bogus'],
    [['doctor', '--adapter', 'gpu'], '--adapter'],
    [['frobnicate'], 'frobnicate'],
  ])('%j', (args, name) => {
    const r = run(args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(name);
  });

  it('an invalid KERNELKIT_BACKEND names the variable', () => {
    const r = run(['grid-search'], { KERNELKIT_BACKEND: 'cuda' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('KERNELKIT_BACKEND');
  });

  it('a malformed grid file is reported with its name and line', () => {
    const bad = join(tmp, 'grid.txt');
    writeFileSync(bad, '1 2 x\n');
    const r = run(['grid-search', '--grid', bad, '--backend', 'cpu']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${bad}:1`);
    // A failure is one line with the cause; the stack only with KERNELKIT_DEBUG.
    expect(r.stderr).toMatch(/^kernelkit: [^\n]+\n$/);
    expect(run(['grid-search', '--grid', bad, '--backend', 'cpu'], { KERNELKIT_DEBUG: '1' }).stderr).toMatch(/\n {4}at /);
  });
});

describe('conventions shared by every CLI', () => {
  const version = (JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8')) as { version: string }).version;

  it('--version prints the package version and exits 0', () => {
    const r = run(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(version);
  });

  it.each([[['help']], [['help', 'doctor']], [['--help']], [['grid-search', '-h']]])('%j exits 0 with the usage on stdout', (args) => {
    const r = run(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: kernelkit/);
  });

  it('a usage error is `kernelkit: <message>` plus a --help hint on stderr, nothing on stdout', () => {
    const r = run(['doctor', '--bogus']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`kernelkit: unknown option '--bogus'\nTry 'kernelkit --help'.\n`);
    const bad = run(['grid-search', '--backend', 'cuda']);
    expect(bad.stderr).toBe(`kernelkit: --backend: expected one of webgpu, piscina, cpu, gpujs, got "cuda"\nTry 'kernelkit --help'.\n`);
  });

  it('an unknown --variant exits 2 and lists the backend\'s variants', () => {
    const r = run(['grid-search', '--backend', 'cpu', '--variant', 'nope']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^kernelkit: --variant: the cpu backend has no grid-search variant "nope" \(it has: [a-z-]+(, [a-z-]+)*\)\n/);
  });
});

describe('Dawn native warnings filter', () => {
  const DAWN =
    "Warning: Couldn't load Vulkan: libvulkan.so.1: cannot open shared object file\n    at operator() (third_party/dawn/src/dawn/native/vulkan/BackendVk.cpp:368)\n\n" +
    'Warning: maxDynamicStorageBuffersPerPipelineLayout artificially reduced from 80 to 16 to fit dynamic offset allocation limit.\n';
  const KEEP = 'scan cpu/sequential: median 1 ms\n\u001b[1G███ 3/10 rows | ETA 2s\u001b[0K\u001b[1G███ 4/10 rows';

  it.each([1, 2, 3, 7, 1000])('drops them and keeps everything else, whatever the chunk size (%i)', (size) => {
    const text = `first line\n${DAWN}${KEEP}\n${DAWN}Warning is a word a table may start with\nlast`;
    let out = '';
    const f = nativeWarningFilter((t) => (out += t));
    for (let i = 0; i < text.length; i += size) f.push(text.slice(i, i + size));
    f.flush();
    expect(out).toBe(`first line\n${KEEP}\nWarning is a word a table may start with\nlast`);
  });

  it('passes a partial progress line through before its line ends', () => {
    let out = '';
    const f = nativeWarningFilter((t) => (out += t));
    f.push('\u001b[1G███ 3/10 rows');
    expect(out).toBe('\u001b[1G███ 3/10 rows');
  });

  it('doctor prints no Dawn warning on filtered stderr (as on a terminal), and its JSON on stdout parses', () => {
    const r = run(['doctor', '--json', '-'], { KERNELKIT_STDERR_FILTER: '1' }, 90_000);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/^Warning: /m);
    expect(() => JSON.parse(r.stdout) as unknown).not.toThrow();
  });
});

describe('commands', () => {
  it('doctor --json parses, lists every backend and the process exits by itself', () => {
    const r = run(['doctor', '--json'], {}, 90_000);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { backends: { backend: string; status: string }[]; autoSelection: { status: string; selected?: string } };
    expect(report.backends.map((b) => b.backend).sort()).toEqual(['cpu', 'gpujs', 'piscina', 'webgpu']);
    expect(report.backends.find((b) => b.backend === 'cpu')?.status).toBe('available');
    expect(report.autoSelection.status).toBe('ok');
  });

  it('doctor --json - and --json FILE write the same report; the text report has no raw JSON', () => {
    const stdout = run(['doctor', '--json', '-'], {}, 90_000);
    expect(stdout.code).toBe(0);
    const fromStdout = JSON.parse(stdout.stdout) as { backends: unknown[] };
    const file = join(mkdtempSync(join(tmpdir(), 'kk-doctor-')), 'doctor.json');
    const toFile = run(['doctor', '--json', file], {}, 90_000);
    expect(toFile.code).toBe(0);
    expect(toFile.stdout).toBe('');
    expect((JSON.parse(readFileSync(file, 'utf8')) as { backends: unknown[] }).backends.length).toBe(fromStdout.backends.length);
    const text = run(['doctor'], {}, 90_000);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^gpu\.js modes:\n {2}webgpu +(available|unavailable)/m);
    expect(text.stdout).not.toMatch(/[{[]"/);
  });

  it('grid-search writes the CS610 results file (reduced grid, cpu)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kk-grid-'));
    const grid = join(dir, 'grid.txt');
    // Three points per axis of the real CS610 grid, so the run is quick.
    const real = readFileSync(fileURLToPath(import.meta.resolve('@kernelkit/ops')).replace(/dist[/\\]index\.js$/, 'data/cs610-grid-search/grid.txt'), 'utf8');
    const nums = real.trim().split(/\s+/).map(Number);
    const rows: string[] = [];
    for (let j = 0; j < 10; j++) {
      const [lo, , st] = [nums[3 * j]!, nums[3 * j + 1]!, nums[3 * j + 2]!];
      rows.push(`${lo} ${lo + 3.5 * st} ${st}`);
    }
    writeFileSync(grid, rows.join('\n') + '\n');
    const out = join(dir, 'results.txt');
    const r = run(['grid-search', '--grid', grid, '--out', out, '--backend', 'cpu', '--variant', 'naive', '--json']);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as { count: number; backend: string; variant: string };
    expect(summary.backend).toBe('cpu');
    expect(summary.variant).toBe('naive');
    const lines = readFileSync(out, 'utf8').split('\n').filter((l) => l !== '');
    expect(lines.length).toBe(summary.count);
    for (const l of lines) expect(l.split('\t')).toHaveLength(10);
  });
});

describe('importing kernelkit is cheap', () => {
  it('loads no Dawn, no gpu.js, no Piscina and starts no worker threads', () => {
    // A loader hook logs every module URL the import resolves; the heavy backends must not appear.
    const hook = `export async function resolve(s, c, next) { const r = await next(s, c); console.error('RESOLVED ' + r.url); return r; }`;
    const script = `
      import { register } from 'node:module';
      register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
      const k = await import('kernelkit');
      const handles = process.getActiveResourcesInfo();
      console.log(JSON.stringify({ hasCreate: typeof k.createKernels, handles, gpu: 'GPUBufferUsage' in globalThis }));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', cwd: PKG, timeout: 30_000, env });
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { hasCreate: string; handles: string[]; gpu: boolean };
    expect(out.hasCreate).toBe('function');
    const resolved = r.stderr.split('\n').filter((l) => l.startsWith('RESOLVED '));
    expect(resolved.some((l) => l.includes('/kernelkit/'))).toBe(true); // the hook did run
    expect(resolved.filter((l) => /webgpu|gpu\.js|piscina|\/gl\//.test(l))).toEqual([]);
    expect(out.gpu).toBe(false);
    // A worker pool or a GPU device would show up as an active handle and keep the process alive.
    expect(out.handles.filter((h) => /Worker|MessagePort|Timeout|Immediate/.test(h))).toEqual([]);
  });
});

describe('kernelkit calibrate', () => {
  it('measures within its budget, writes the cache and prints the model as JSON; doctor shows it with the measured choices', async () => {
    const cache = join(mkdtempSync(join(tmpdir(), 'kk-cal-')), 'calibration.json');
    const r = run(['calibrate', '--budget', '4', '--cache', cache, '--json', '-']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { backends: string[]; ms: number; path: string; bands: Record<string, unknown[]> };
    expect(report.backends).toContain('cpu');
    expect(report.path).toBe(cache);
    expect(report.ms).toBeLessThan(10_000);
    expect(Object.keys(report.bands)).toContain('scan');
    expect((JSON.parse(readFileSync(cache, 'utf8')) as { version: number }).version).toBe(CALIBRATION_FORMAT_VERSION);
    // A measured choice as exploring calls leave it, filed under the backends just calibrated.
    const file = JSON.parse(readFileSync(cache, 'utf8')) as { machines: Record<string, { backends: Record<string, unknown> }> };
    const set = candidateSet(Object.keys(file.machines[machineKey(machineIdentity())]!.backends));
    const key = 'scan work~10^6.75 u32 in:host out:array';
    await writeMeasuredChoices(cache, machineIdentity(), set, { [key]: { backend: 'cpu', variant: 'sequential', trials: { 'cpu/sequential': { ms: 7.5, work: 6.4e6, calls: 6 }, 'piscina/two-pass': { ms: 9.25, work: 6.4e6, calls: 5 } } } });
    const doctor = run(['doctor'], { KERNELKIT_CALIBRATION_CACHE: cache });
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toContain(`calibration (${cache}):`);
    expect(doctor.stdout).toMatch(/picks \(host arrays/);
    expect(doctor.stdout).toMatch(/measured choices/);
    // The prediction beside it exists only when the budget let calibration fit scan (a loaded CI machine may not).
    const predicted = report.bands.scan!.length > 0 ? '; predicted \\w+/\\S+' : '';
    expect(doctor.stdout).toMatch(new RegExp(`${key.replace(/[\^.]/g, '\\$&')}: cpu/sequential \\(measured: cpu/sequential 7\\.5 ms \\(6 calls\\), piscina/two-pass 9\\.3 ms \\(5 calls\\)\\)${predicted}$`, 'm'));
  });

  it('--budget 0 is a usage error', () => {
    const r = run(['calibrate', '--budget', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--budget');
  });
});
