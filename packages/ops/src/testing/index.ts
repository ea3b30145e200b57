export { describeConformance } from './conformance.js';
export type { ConformanceOptions } from './conformance.js';
export { describeBadInput, BAD_INPUT_CASES } from './bad-input.js';
export type { BadInputCase } from './bad-input.js';
export * from './cases.js';
export { compareFloat, compareExact } from './compare.js';
export type { Mismatch } from './compare.js';
export * from './tolerance.js';
