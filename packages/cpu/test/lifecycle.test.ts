import { describe } from 'vitest';
import { describeAbortLatency, describeDisposeRule } from '@kernelkit/ops/testing';
import { createCpuBackend } from '../src/index.js';

describe('cpu: dispose rule', () => describeDisposeRule('cpu', () => createCpuBackend()));
describe('cpu: abort latency', () => describeAbortLatency('cpu', () => createCpuBackend()));
