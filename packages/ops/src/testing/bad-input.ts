import { expect, it } from 'vitest';
import { InvalidArgumentError } from '@kernelkit/core';
import type { Backend } from '../backend.js';
import { verifyResult } from '../verify.js';
import { BAD_INPUT_CASES, type OversizeCase } from './bad-input-cases.js';
import { conv2dCase } from './cases.js';
import { refusalProblem, type Refusal } from './refusal.js';
import { describeUnusualInputs } from './unusual-inputs.js';

export { BAD_INPUT_CASES } from './bad-input-cases.js';
export type { BadInputCase, OversizeCase } from './bad-input-cases.js';

/** The refusal is right, and the backend still answers a correct call afterwards. */
async function expectRefused(backend: Backend, row: Refusal, variant: string | undefined): Promise<void> {
  expect(await refusalProblem(backend, row, variant)).toBeUndefined();
  const ok = conv2dCase([1, 5, 5, 3], 2);
  const res = await backend.conv2d(ok);
  expect(verifyResult('conv2d', ok, res.data)).toBeUndefined();
}

function register(backend: Backend, title: string, row: Refusal & { readonly everyVariant?: boolean; readonly knownGap?: string | undefined }): void {
  const test = row.knownGap === undefined ? it : it.fails;
  const name = row.knownGap === undefined ? title : `${title} [known gap, expected to fail: ${row.knownGap}]`;
  test(name, async () => {
    if (!row.everyVariant) return expectRefused(backend, row, undefined);
    for (const v of backend.variants(row.op)) await expectRefused(backend, row, v);
  });
}

/**
 * Registers one test per bad-input row on `backend`, the valid calls in unusual forms that must
 * not be refused, then one per `oversize` row (inputs larger than this particular backend can
 * hold; the backend supplies them).
 */
export function describeBadInput(backend: Backend, options: { readonly oversize?: readonly OversizeCase[] } = {}): void {
  for (const c of BAD_INPUT_CASES) {
    const error = c.error ?? InvalidArgumentError;
    const naming = c.parameter === undefined ? '' : ` naming ${c.parameter}`;
    register(backend, `${c.op}: ${c.what} → ${error.name}${naming}`, { ...c, error, parameter: c.parameter });
  }
  describeUnusualInputs(backend);
  for (const c of options.oversize ?? []) {
    const naming = c.parameter === undefined ? '' : ` naming ${c.parameter}`;
    register(backend, `${c.op}: ${c.what} (larger than ${backend.name} holds) → ${c.error.name}${naming}`, { ...c, parameter: c.parameter });
  }
}
