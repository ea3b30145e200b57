import { defineConfig } from 'vitest/config';
import { wasmBuildProjects } from '../../scripts/vitest-wasm-builds.mjs';

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 60_000,
    projects: wasmBuildProjects('cpu', ['test/conformance.test.ts', 'test/wasm-simd.test.ts']),
  },
});
