import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    // Auto-routed calls calibrate on first use: tests must not write the user's cache.
    env: { KERNELKIT_CALIBRATION_CACHE: join(tmpdir(), `kernelkit-test-calibration-${process.pid}.json`) },
  },
});
