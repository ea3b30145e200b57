import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Two files at a time even on two cores (vitest's default there is one): on llvmpipe a file
    // waits on the software GPU's threads and on shader compiles, which leave a core free.
    maxWorkers: 2,
  },
});
