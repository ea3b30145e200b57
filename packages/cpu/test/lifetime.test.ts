import { describeLifetimeCycles } from '@kernelkit/ops/testing';
import { createCpuBackend } from '../src/index.js';

// The CPU backend holds nothing but memory: RSS is the only resource to watch.
describeLifetimeCycles('cpu', () => createCpuBackend());
