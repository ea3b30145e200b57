import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Two files at a time even on two cores (vitest's default there is one): the headless-gl
    // files spend most of their time in llvmpipe and Xvfb, and run alone they set the suite's length.
    maxWorkers: 2,
  },
});
