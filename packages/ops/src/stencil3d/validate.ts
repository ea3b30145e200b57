import { assertFiniteNumber, assertInteger, assertObject, assertOneOf, checkedProduct } from '@kernelkit/core';
import { assertArrayOrDevice, type WithDeviceInput } from '../device-array.js';
import { STENCIL_DEFAULTS } from './shape.js';
import type { Stencil3dArgs, Stencil3dProblem } from './types.js';

/** A DeviceArray `input` validates like the array it stands for and stays a handle in the problem. */
export function validateStencil3d(args: Stencil3dArgs): Stencil3dProblem;
export function validateStencil3d(args: WithDeviceInput<Stencil3dArgs>): WithDeviceInput<Stencil3dProblem>;
export function validateStencil3d(args: WithDeviceInput<Stencil3dArgs>): WithDeviceInput<Stencil3dProblem> {
  assertObject(args, 'args');
  assertInteger(args.nx, 'nx', 1);
  const ny = args.ny ?? args.nx;
  const nz = args.nz ?? args.nx;
  assertInteger(ny, 'ny', 1);
  assertInteger(nz, 'nz', 1);
  const steps = args.steps ?? 1;
  assertInteger(steps, 'steps', 0, 1_000_000);
  const boundary = args.boundary ?? 'zero';
  assertOneOf(boundary, 'boundary', ['zero', 'copy'] as const);
  const c0 = args.c0 ?? STENCIL_DEFAULTS[boundary].c0;
  const c1 = args.c1 ?? STENCIL_DEFAULTS[boundary].c1;
  assertFiniteNumber(c0, 'c0');
  assertFiniteNumber(c1, 'c1');
  const n = checkedProduct('input', [args.nx, ny, nz], 2 ** 32 - 1);
  assertArrayOrDevice(args.input, 'input', [Float32Array, Float64Array], n, 'nx*ny*nz');
  return { input: args.input, nx: args.nx, ny, nz, steps, boundary, c0, c1 };
}
