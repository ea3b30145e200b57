import { describe } from 'vitest';
import { describeDisposeRule } from '@kernelkit/ops/testing';
import { createWebGpuBackend } from '../src/index.js';

// llvmpipe (software) is what CI has, so the small calls.
describe('webgpu (software): dispose rule', () => describeDisposeRule('webgpu (software)', () => createWebGpuBackend({ adapter: 'software' }), { scale: 'reduced', timeoutMs: 300_000 }));
