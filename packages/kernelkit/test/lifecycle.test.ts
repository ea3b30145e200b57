import { describe } from 'vitest';
import { createCpuBackend } from '@kernelkit/cpu';
import { OP_NAMES } from '@kernelkit/ops';
import { describeDisposeRule } from '@kernelkit/ops/testing';
import { createKernels } from '../src/index.js';
import type { BackendCost, CostModel } from '../src/router/cost-model.js';

// The facade's own dispose (it disposes the backends it started) follows the backends' rule.
describe('kernelkit (fixed cpu): dispose rule', () => describeDisposeRule('kernelkit fixed cpu', () => createKernels({ backend: 'cpu' }, undefined, {})));

// Routed calls go through the router first (prediction, a lazy backend start): a call made
// before dispose() must still finish there.
const variants = Object.fromEntries(OP_NAMES.map((op) => [op, createCpuBackend().variants(op)])) as BackendCost['variants'];
const fit = { fixedMs: 0, msPerWork: 1e-6, msPerPass: 0 };
const cpuOnly: CostModel = {
  backends: {
    cpu: {
      key: 'cpu', description: 'cpu', software: false, startMs: 1, upload: { fixedMs: 0, msPerByte: 0 }, download: { fixedMs: 0, msPerByte: 0 }, variants,
      ops: Object.fromEntries(OP_NAMES.map((op) => [op, { [variants[op]![0]!]: { fit, samples: [] } }])) as BackendCost['ops'],
    },
  },
};
describe('kernelkit (auto route): dispose rule', () => describeDisposeRule('kernelkit auto route', () => createKernels({ costModel: cpuOnly }, undefined, {})));
