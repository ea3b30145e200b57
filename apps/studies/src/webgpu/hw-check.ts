import { readFileSync } from 'node:fs';
import { cs610Problem, CS610_DISP_PATH, CS610_GRID_PATH, gridSearchReference, reduceGrid, validateGridSearch, type Backend, type GridPoints, type OpArgs, type OpName } from '@kernelkit/ops';
import { checkResult } from '../common.js';
import { CONV2D_CASES, CONV_LAYER_CASES, conv2dCase, convLayerCase, GRID_CASES, randomGridCase, SCAN_LENGTHS, scanCase, STENCIL_CASES, stencilCase } from '@kernelkit/ops/testing/data';

/**
 * A conformance subset for a hardware adapter (the GPU host has no vitest): the suite's fixed
 * cases for every op × variant, checked against the f64 reference (the CS610 grid against its brute force).
 */
export async function runHardwareChecks(b: Backend): Promise<{ passed: number; total: number; failures: string[] }> {
  let passed = 0;
  let total = 0;
  const failures: string[] = [];
  const one = async <O extends OpName>(op: O, args: OpArgs<O>, variant: string, label: string, grid?: GridPoints) => {
    total++;
    try {
      const res = await (b[op] as unknown as (a: OpArgs<O>, o: object) => Promise<{ data: never }>)(args, { variant });
      const msg = checkResult(op, args as OpArgs<OpName>, res.data, grid === undefined ? { kind: 'f64' } : { kind: 'identical', data: grid }).message;
      if (msg === undefined) passed++;
      else failures.push(`${op}/${variant} ${label}: ${msg}`);
    } catch (e) {
      failures.push(`${op}/${variant} ${label}: ${(e as Error).message.slice(0, 300)}`);
    }
  };
  for (const v of b.variants('conv2d')) for (const c of CONV2D_CASES) await one('conv2d', conv2dCase(c, 11), v, c.join('×'));
  for (const v of b.variants('stencil3d')) for (const c of STENCIL_CASES) await one('stencil3d', stencilCase(c, 13), v, c.join('×'));
  for (const v of b.variants('scan'))
    for (const d of ['u32', 'i32', 'f32'] as const) for (const n of SCAN_LENGTHS) await one('scan', scanCase(d, n, n + 1, n % 2 === 0, d === 'u32' ? 4_000_000_000 : d === 'i32' ? -5 : 2.5), v, `${d} ${n}`);
  const cs5 = reduceGrid(cs610Problem(readFileSync(CS610_GRID_PATH, 'utf8'), readFileSync(CS610_DISP_PATH, 'utf8')), 5);
  const ref5 = gridSearchReference(validateGridSearch(cs5));
  for (const v of b.variants('gridSearch')) {
    for (const c of GRID_CASES) await one('gridSearch', c.args, v, c.name);
    for (let s = 0; s < 50; s++) await one('gridSearch', randomGridCase(s), v, `random ${s}`);
    await one('gridSearch', cs5, v, 'CS610 5^10', ref5);
  }
  for (const v of b.variants('convLayer')) for (const c of CONV_LAYER_CASES) await one('convLayer', convLayerCase(c, 17), v, c.join('×'));
  return { passed, total, failures };
}
