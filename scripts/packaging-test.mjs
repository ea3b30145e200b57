#!/usr/bin/env node
// The packaging test (part of `npm test`): packs every public package, installs the tarballs
// into fresh projects outside the workspace and uses them the way a user would. It catches what
// the workspace hides: files missing from a tarball, undeclared dependencies, a facade that
// pulls the GPU backends, a main entry that loads test tools, types that do not resolve.
// Run after `npm run build`. Set KERNELKIT_KEEP_PACKAGING_DIR=1 to keep the temporary projects.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PUBLIC = ['core', 'ops', 'cpu', 'piscina', 'webgpu', 'gpujs', 'kernelkit'];
const NAMES = Object.fromEntries(PUBLIC.map((dir) => [dir, JSON.parse(readFileSync(path.join(ROOT, 'packages', dir, 'package.json'), 'utf8')).name]));
// Measuring code lives in apps/: no tarball may ship a folder of it, nor a study script by name wherever it sits.
const MEASURING_DIRS = /(^|\/)(bench|studies)\//;
const STUDY_SCRIPTS = /(^|\/)(ceilings|ceiling-probes|ceiling-worker|conv-layer-chunks|hw-check|ladder|programs|reliability|scaling|steady|threshold|sample-check)\.(js|ts|d\.ts)$/;
// What the facade must not pull in: the GPU backends and their native packages.
const GPU_PACKAGES = ['@kernelkit/webgpu', '@kernelkit/gpujs', 'webgpu', 'gpu.js', 'gl'];
// The workspace's TypeScript (node_modules/.bin/tsc may be another package's tsc).
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

const t0 = performance.now();
const step = (what) => console.log(`packaging: ${what} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 2 ** 20, ...options });
  if (r.error) throw r.error;
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal} in ${options.cwd ?? process.cwd()}\n${r.stdout}\n${r.stderr}`);
  }
  return r;
}

const work = mkdtempSync(path.join(os.tmpdir(), 'kernelkit-packaging-'));
// The consumers' first routed calls calibrate: keep that cache in the temporary folder, not ~/.cache.
process.env.KERNELKIT_CALIBRATION_CACHE = path.join(work, 'calibration.json');
try {
  // 1. Pack, and look inside each tarball.
  const tarballs = path.join(work, 'tarballs');
  mkdirSync(tarballs);
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', tarballs, ...PUBLIC.map((d) => `--workspace=${NAMES[d]}`)], { cwd: ROOT }).stdout);
  const tgz = {};
  for (const p of packed) {
    const dir = PUBLIC.find((d) => NAMES[d] === p.name);
    assert.ok(dir, `packed an unexpected package ${p.name}`);
    tgz[dir] = path.join(tarballs, p.filename);
    const files = p.files.map((f) => f.path);
    const measuring = files.filter((f) => MEASURING_DIRS.test(f) || STUDY_SCRIPTS.test(f));
    assert.deepEqual(measuring, [], `${p.name}'s tarball ships measuring code`);
    assert.ok(files.includes('LICENSE'), `${p.name}'s tarball has no LICENSE`);
    if (existsSync(path.join(ROOT, 'packages', dir, 'README.md'))) assert.ok(files.includes('README.md'), `${p.name}'s tarball has no README.md`);
    assert.ok(files.includes('dist/index.js') && files.includes('dist/index.d.ts'), `${p.name}'s tarball has no built entry (run npm run build first)`);
    assert.ok(!files.some((f) => f.startsWith('test/')), `${p.name}'s tarball ships its tests`);
  }
  assert.deepEqual(Object.keys(tgz).sort(), [...PUBLIC].sort());
  const facade = JSON.parse(execFileSync('tar', ['-xOzf', tgz.kernelkit, 'package/package.json'], { encoding: 'utf8' }));
  for (const name of GPU_PACKAGES) assert.ok(!(name in (facade.dependencies ?? {})), `kernelkit depends on ${name}`);
  for (const name of ['@kernelkit/webgpu', '@kernelkit/gpujs']) assert.equal(facade.peerDependenciesMeta?.[name]?.optional, true, `${name} is not an optional peer of kernelkit`);
  step('packed 7 packages; no measuring code; LICENSE in each; kernelkit depends on no GPU package');

  // 2. A CPU-only user: the facade and the CPU backends, nothing else.
  const cpuOnly = path.join(work, 'cpu-only');
  mkdirSync(cpuOnly);
  writeFileSync(path.join(cpuOnly, 'package.json'), JSON.stringify({ name: 'cpu-only-consumer', private: true, type: 'module' }, null, 2));
  run('npm', ['install', ...INSTALL_FLAGS, tgz.core, tgz.ops, tgz.cpu, tgz.piscina, tgz.kernelkit], { cwd: cpuOnly });
  for (const name of [...GPU_PACKAGES, 'vitest', 'fast-check']) assert.ok(!existsSync(path.join(cpuOnly, 'node_modules', name)), `installing kernelkit installed ${name}`);
  writeFileSync(
    path.join(cpuOnly, 'use.mjs'),
    `import assert from 'node:assert/strict';
import { createKernels } from 'kernelkit';
const k = await createKernels({ threads: 2 });
assert.equal(k.selected, 'piscina');
assert.deepEqual(k.skipped, [{ backend: 'webgpu', reason: 'not installed: npm install @kernelkit/webgpu' }]);
const r = await k.scan({ input: new Float32Array([1, 2, 3, 4]) });
assert.deepEqual(Array.from(r.data), [1, 3, 6, 10]);
await k.dispose();
console.log('cpu-only ok');
`,
  );
  assert.match(run('node', ['use.mjs'], { cwd: cpuOnly, timeout: 60_000 }).stdout, /cpu-only ok/);
  const doctor = run(path.join(cpuOnly, 'node_modules', '.bin', 'kernelkit'), ['doctor'], { cwd: cpuOnly, timeout: 60_000 }).stdout;
  assert.match(doctor, /webgpu\s+unavailable\s+not installed: npm install @kernelkit\/webgpu/);
  assert.match(doctor, /gpujs\s+unavailable\s+not installed: npm install @kernelkit\/gpujs/);
  step('cpu-only project: no GPU package installed, createKernels() picks piscina and says how to add webgpu, the kernelkit bin runs doctor');

  // 3. A user of every package: one small op on each backend, then the facade; the process must exit by itself.
  const full = path.join(work, 'full');
  mkdirSync(full);
  // Install scripts run only where allowed (npm 11): Dawn's is, headless-gl's native build is
  // declined, as a user who never lists it would (the workspace's own `npm ci` builds it); gpu.js
  // must then still install, run its other modes, and say why headlessgl is unavailable.
  writeFileSync(path.join(full, 'package.json'), JSON.stringify({ name: 'full-consumer', private: true, type: 'module', allowScripts: { webgpu: true, gl: false } }, null, 2));
  run('npm', ['install', ...INSTALL_FLAGS, ...PUBLIC.map((d) => tgz[d])], { cwd: full });
  for (const name of ['vitest', 'fast-check']) assert.ok(!existsSync(path.join(full, 'node_modules', name)), `an optional test peer (${name}) was installed`);
  writeFileSync(
    path.join(full, 'use.mjs'),
    `import assert from 'node:assert/strict';
import { OP_NAMES } from '@kernelkit/ops';
import { createCpuBackend } from '@kernelkit/cpu';
import { createPiscinaBackend } from '@kernelkit/piscina';
import { createWebGpuBackend } from '@kernelkit/webgpu';
import { createGpujsBackend, probeGpujsModes } from '@kernelkit/gpujs';
import { createKernels } from 'kernelkit';

assert.equal(OP_NAMES.length, 5);
// Probed first: once Dawn's OpenGL ES device exists in this process, headless-gl is refused for that reason.
const headlessgl = (await probeGpujsModes()).headlessgl;
assert.equal(headlessgl.available, false, 'headlessgl available without a gl build');
assert.match(headlessgl.reason, /gl \\(headless-gl\\) package is not installed or not built/);
console.log('gpujs headlessgl unavailable ok: ' + headlessgl.reason);
// conv2d of a 3×3 image of ones with a 3×3 filter of ones, zeros outside the image.
const conv = { input: new Float32Array(9).fill(1), filter: new Float32Array(9).fill(1), height: 3, width: 3, k: 3 };
const CONV = [4, 6, 4, 6, 9, 6, 4, 6, 4];
async function check(label, backend) {
  try {
    assert.deepEqual(Array.from((await backend.conv2d(conv)).data), CONV, label + ' conv2d');
    assert.deepEqual(Array.from((await backend.scan({ input: new Uint32Array([1, 2, 3, 4]) })).data), [1, 3, 6, 10], label + ' scan');
  } finally {
    await backend.dispose();
  }
  console.log(label + ' ok');
}
await check('cpu', createCpuBackend());
// inlineBelow 0: the calls run on the workers, not on this thread.
await check('piscina', await createPiscinaBackend({ threads: 2, inlineBelow: { conv2d: 0, scan: 0 } }));
await check('webgpu', await createWebGpuBackend({ adapter: 'software' }));
await check('gpujs', await createGpujsBackend({ mode: 'cpu' }));
const k = await createKernels({ threads: 2 });
assert.equal(k.selected === 'webgpu' || k.selected === 'piscina', true);
await check('kernelkit (' + k.selected + ')', k);
`,
  );
  const env = { ...process.env, EGL_PLATFORM: process.env.EGL_PLATFORM ?? 'surfaceless' };
  const used = spawnSync('node', ['use.mjs'], { cwd: full, env, encoding: 'utf8', timeout: 90_000 });
  assert.equal(used.signal, null, `use.mjs did not exit by itself within 90 s (killed by ${used.signal})\n${used.stdout}\n${used.stderr}`);
  assert.equal(used.status, 0, `use.mjs failed\n${used.stdout}\n${used.stderr}`);
  for (const label of ['cpu', 'piscina', 'webgpu', 'gpujs', 'kernelkit']) assert.match(used.stdout, new RegExp(`^${label}.* ok$`, 'm'));
  assert.match(used.stdout, /^gpujs headlessgl unavailable ok: /m);
  step('full project: conv2d and scan correct on cpu, piscina, webgpu (software), gpujs (cpu mode) and createKernels(); gpujs without a gl build names it as why headlessgl is unavailable; the process exited by itself');

  // 4. The public types, as a strict NodeNext TypeScript consumer sees them (library types checked too).
  writeFileSync(
    path.join(full, 'consumer.ts'),
    `import { createKernels, BackendUnavailableError, type AdapterKind, type Kernels, type GpujsMode, type WebGpuProbe, type Result } from 'kernelkit';
import type { Backend, Conv2dArgs, ScanArgs } from '@kernelkit/ops';
import { createCpuBackend } from '@kernelkit/cpu';
import type { PiscinaBackendOptions } from '@kernelkit/piscina';
import type { WebGpuBackendOptions } from '@kernelkit/webgpu';
import type { GpujsBackendOptions } from '@kernelkit/gpujs';
import { KernelkitError } from '@kernelkit/core';

const adapter: AdapterKind = 'software';
const mode: GpujsMode = 'webasm';
const options: [PiscinaBackendOptions, WebGpuBackendOptions, GpujsBackendOptions] = [{ threads: 2 }, { adapter }, { mode }];
const args: Conv2dArgs = { input: new Float32Array(9), filter: new Float32Array(1), height: 3, width: 3, k: 1 };
const scan: ScanArgs<Float32Array> = { input: new Float32Array(4) };
export async function use(probe: WebGpuProbe): Promise<number> {
  const k: Kernels = await createKernels({ backends: ['piscina', 'cpu'] });
  const r: Result<Float32Array> = await k.conv2d(args);
  const b: Backend = createCpuBackend();
  await b.dispose();
  await k.dispose();
  const e: KernelkitError = new BackendUnavailableError('x');
  return r.data.length + (await k.scan(scan)).data.length + options.length + (probe.available ? 1 : 0) + e.message.length;
}
`,
  );
  writeFileSync(
    path.join(full, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023', 'ESNext.Disposable'],
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
        // The workspace's @types/node, so the consumer installs no type packages of its own.
        typeRoots: [path.join(ROOT, 'node_modules', '@types')],
      },
      files: ['consumer.ts'],
    }),
  );
  // @webgpu/types (the GPU* types of @kernelkit/webgpu's declarations) compiles only with
  // skipLibCheck: without lib DOM it lacks DOM names, with it it clashes with DOM's own WebGPU
  // types. So its own errors are ignored here; an error anywhere else fails.
  const checked = spawnSync('node', [TSC, '-p', 'tsconfig.json'], { cwd: full, encoding: 'utf8' });
  const errors = checked.stdout.split('\n').filter((line) => /error TS\d+/.test(line) && !line.startsWith('node_modules/@webgpu/types/'));
  assert.deepEqual(errors, [], `the TypeScript consumer does not compile:\n${checked.stdout}`);
  step('a strict NodeNext TypeScript consumer type-checks against the public types (skipLibCheck off; the errors of @webgpu/types itself ignored)');

  // 5. The CPU-only project's TypeScript, library declarations checked too: kernelkit's types
  // (the GPU backends' options and probes among them) must name no package that is absent there.
  writeFileSync(
    path.join(cpuOnly, 'consumer.ts'),
    `import { createKernels, type AdapterKind, type GpujsMode, type Kernels, type ModeProbe, type WebGpuProbe } from 'kernelkit';
export async function use(probe: WebGpuProbe | ModeProbe): Promise<number> {
  const adapter: AdapterKind = 'any';
  const mode: GpujsMode = 'cpu';
  const k: Kernels = await createKernels({ backends: ['piscina', 'cpu'], threads: 2, adapter });
  const r = await k.scan({ input: new Float32Array([1, 2]) });
  await k.dispose();
  return r.data.length + mode.length + (probe.available ? 1 : 0);
}
`,
  );
  writeFileSync(
    path.join(cpuOnly, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2023', 'ESNext.Disposable'], strict: true, exactOptionalPropertyTypes: true, noEmit: true, skipLibCheck: false, types: ['node'], typeRoots: [path.join(ROOT, 'node_modules', '@types')] },
      files: ['consumer.ts'],
    }),
  );
  run('node', [TSC, '-p', 'tsconfig.json'], { cwd: cpuOnly });
  step('a strict NodeNext TypeScript consumer of the CPU-only project type-checks (skipLibCheck off)');
  console.log('packaging: ok');
} finally {
  if (process.env.KERNELKIT_KEEP_PACKAGING_DIR) console.log(`packaging: kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
