import { describeConformance } from '@kernelkit/ops/testing';
import { createCpuBackend } from '../src/index.js';

await describeConformance('cpu', () => createCpuBackend());
