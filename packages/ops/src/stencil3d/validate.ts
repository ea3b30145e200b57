import { assertFiniteNumber, assertInteger, assertOneOf, checkedProduct } from '@kernelkit/core';
import { readArgs } from '../common/args.js';
import { checkArrayOrDevice, type WithDeviceInput } from '../device-array.js';
import { STENCIL_DEFAULTS } from './shape.js';
import type { Stencil3dArgs, Stencil3dProblem } from './types.js';

const KEYS = ['input', 'nx', 'ny', 'nz', 'steps', 'boundary', 'c0', 'c1'] as const;

/**
 * Each argument is read once and the problem keeps what was checked (see `readArgs`). A
 * DeviceArray `input` validates like the array it stands for and stays a handle in the problem.
 */
export function validateStencil3d(args: Stencil3dArgs): Stencil3dProblem;
export function validateStencil3d(args: WithDeviceInput<Stencil3dArgs>): WithDeviceInput<Stencil3dProblem>;
export function validateStencil3d(args: WithDeviceInput<Stencil3dArgs>): WithDeviceInput<Stencil3dProblem> {
  const a = readArgs(args, 'args', KEYS);
  const nx = a.nx;
  assertInteger(nx, 'nx', 1);
  const ny = a.ny ?? nx;
  const nz = a.nz ?? nx;
  assertInteger(ny, 'ny', 1);
  assertInteger(nz, 'nz', 1);
  const steps = a.steps ?? 1;
  assertInteger(steps, 'steps', 0, 1_000_000);
  const boundary = a.boundary ?? 'zero';
  assertOneOf(boundary, 'boundary', ['zero', 'copy'] as const);
  const c0 = a.c0 ?? STENCIL_DEFAULTS[boundary].c0;
  const c1 = a.c1 ?? STENCIL_DEFAULTS[boundary].c1;
  assertFiniteNumber(c0, 'c0');
  assertFiniteNumber(c1, 'c1');
  const n = checkedProduct('input', [nx, ny, nz], 2 ** 32 - 1);
  const input = checkArrayOrDevice<Float32Array | Float64Array>(a.input, 'input', [Float32Array, Float64Array], n, 'nx*ny*nz');
  return { input, nx, ny, nz, steps, boundary, c0, c1 } as WithDeviceInput<Stencil3dProblem>;
}
