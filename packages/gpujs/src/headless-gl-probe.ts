/**
 * Run in a child process by `probeGpujsModes` (built to dist/headless-gl-probe.js): checks
 * headless-gl where its context cannot keep Dawn's OpenGL ES adapter from the probing process,
 * and prints what it found as JSON.
 */
import { checkHeadlessGl } from './headless-gl.js';

process.stdout.write(JSON.stringify(checkHeadlessGl()));
