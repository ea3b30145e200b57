/**
 * Two native GL stacks that cannot share a process on a machine without a GPU: headless-gl
 * (gpu.js's headlessgl mode, GLX on an X server) and Dawn's OpenGL ES backend (software WebGPU,
 * EGL on Mesa). Once headless-gl has made a context, Dawn finds no OpenGL ES adapter; once Dawn
 * has made an OpenGL ES device, a headless-gl context makes an X error that ends the process.
 * Each package records here what it started and asks before starting the other, so the second
 * one is reported unavailable with the reason instead.
 */
export type GlStack = 'headless-gl' | 'dawn-opengles';

// On globalThis under a registered symbol: every copy of this package in the process sees one set.
const STARTED = Symbol.for('kernelkit.glStacksStarted');

function started(): Set<GlStack> {
  const g = globalThis as { [STARTED]?: Set<GlStack> };
  return (g[STARTED] ??= new Set());
}

/** Records that `stack` made a context (headless-gl) or a device (Dawn's OpenGL ES backend) in this process. */
export function markGlStackStarted(stack: GlStack): void {
  started().add(stack);
}

/** Why `stack` cannot start in this process, or undefined when it can. */
export function glStackConflict(stack: GlStack): string | undefined {
  if (stack === 'headless-gl' && started().has('dawn-opengles')) {
    return "Dawn's OpenGL ES backend (software WebGPU) has made a device in this process, and a headless-gl context beside it ends the process with an X error: use headless-gl in another process";
  }
  if (stack === 'dawn-opengles' && started().has('headless-gl')) {
    return "headless-gl (gpu.js's headlessgl mode) has made a GL context in this process, after which Dawn finds no OpenGL ES adapter: use software WebGPU in another process";
  }
  return undefined;
}
