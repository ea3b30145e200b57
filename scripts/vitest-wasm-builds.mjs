// Vitest projects for a package whose tests run the CPU kernels' WebAssembly: every test file on
// the build this runtime picks by itself, then `otherBuildFiles` once more on the other build
// (KERNELKIT_WASM_SIMD), so both builds are checked whichever Node runs them.
import { relaxedSimdValidates, WASM_SIMD_ENV } from '@kernelkit/cpu';

/** @type {import('./vitest-wasm-builds.d.mts').wasmBuildProjects} */
export function wasmBuildProjects(name, otherBuildFiles) {
  const other = relaxedSimdValidates() ? 'plain' : 'relaxed';
  return [
    { extends: true, test: { name, include: ['test/**/*.test.ts'] } },
    {
      extends: true,
      test: {
        name: `${name} (${other} wasm build)`,
        include: [...otherBuildFiles],
        // One process per file: the relaxed build may set a V8 flag for its whole process.
        pool: 'forks',
        env: { [WASM_SIMD_ENV]: other },
      },
    },
  ];
}
