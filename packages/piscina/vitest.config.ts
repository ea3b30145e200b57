import { defineConfig } from 'vitest/config';
import { relaxedSimdValidates } from '@kernelkit/cpu';

// The suite runs on the WebAssembly build this runtime picks by itself; the conformance suite run once more
// on the other build (KERNELKIT_WASM_SIMD), so both builds are checked whichever Node runs them.
const other = relaxedSimdValidates() ? 'plain' : 'relaxed';

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'piscina', include: ['test/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: `piscina (${other} wasm build)`,
          include: ['test/conformance.test.ts'],
          // One process per file: the relaxed build may set a V8 flag for its whole process.
          pool: 'forks',
          env: { KERNELKIT_WASM_SIMD: other },
        },
      },
    ],
  },
});
