import { describe } from 'vitest';
import { describeAbortLatency, describeDisposeRule } from '@kernelkit/ops/testing';
import { createPiscinaBackend } from '../src/index.js';

// Every call on the pool (inlineBelow 0), so the rule is tested with work in worker threads.
const POOL_ONLY = { conv2d: 0, stencil3d: 0, scan: 0, gridSearch: 0, convLayer: 0 };

describe('piscina: dispose rule', () => describeDisposeRule('piscina', () => createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY })));
describe('piscina: abort latency', () => describeAbortLatency('piscina', () => createPiscinaBackend({ threads: 2, inlineBelow: POOL_ONLY })));
