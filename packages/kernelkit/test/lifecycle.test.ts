import { describe } from 'vitest';
import { describeDisposeRule } from '@kernelkit/ops/testing';
import { createKernels } from '../src/index.js';

// The facade's own dispose (it disposes the backends it started) follows the backends' rule.
describe('kernelkit (fixed cpu): dispose rule', () => describeDisposeRule('kernelkit fixed cpu', () => createKernels({ backend: 'cpu' }, undefined, {})));
