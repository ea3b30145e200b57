import { createRequire } from 'node:module';
import { glStackConflict, markGlStackStarted } from '@kernelkit/core';
import { gpujs } from './gpujs.js';

const require = createRequire(import.meta.url);

interface WebGLRenderingContextLike {
  readonly RENDERER: number;
  getExtension(name: string): unknown;
  getParameter(p: number): unknown;
}

/**
 * The renderer string of a fresh headless-gl context, or why there is none (also where Dawn's
 * OpenGL ES backend already runs in this process). Makes (and destroys) a context in this
 * process, which keeps Dawn's OpenGL ES adapter away for the rest of it: so `probeGpujsModes`
 * runs it in a child process (headless-gl-probe.ts), and only a backend that starts the
 * headlessgl mode runs it here.
 */
export function checkHeadlessGl(): { renderer: string } | string {
  const conflict = glStackConflict('headless-gl');
  if (conflict !== undefined) return conflict;
  let createGl: (w: number, h: number) => WebGLRenderingContextLike | null;
  try {
    createGl = require('gl') as typeof createGl;
  } catch (e) {
    return `the optional gl (headless-gl) package is not installed or not built: ${(e as Error).message.split('\n')[0]}`;
  }
  const gl = createGl(1, 1);
  if (gl === null) return `headless-gl could not create a context (no X server? DISPLAY=${process.env.DISPLAY ?? 'unset'}; run under xvfb-run)`;
  markGlStackStarted('headless-gl');
  const dbg = gl.getExtension('WEBGL_debug_renderer_info') as { UNMASKED_RENDERER_WEBGL: number } | null;
  const renderer = String(gl.getParameter(dbg === null ? gl.RENDERER : dbg.UNMASKED_RENDERER_WEBGL));
  (gl.getExtension('STACKGL_destroy_context') as { destroy(): void } | null)?.destroy();
  if (!gpujs.HeadlessGLKernel.isSupported) return `headless-gl made a context (${renderer}) but gpu.js's HeadlessGLKernel reports unsupported`;
  return { renderer };
}
