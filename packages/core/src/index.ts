export {
  KernelkitError,
  InvalidArgumentError,
  UnsupportedError,
  BackendUnavailableError,
  DisposedError,
  AbortError,
  LimitExceededError,
  FileFormatError,
  DeviceError,
  WorkerError,
  throwIfAborted,
  raceAbort,
  errorMessage,
} from './errors.js';
export type { KernelkitErrorCode, BackendFailure } from './errors.js';
export {
  assertObject,
  assertInteger,
  assertFiniteNumber,
  assertBoolean,
  assertOneOf,
  assertTypedArray,
  checkTypedArray,
  typedArrayTag,
  typedArrayLength,
  assertFunction,
  assertAbortSignal,
  checkedProduct,
  describeValue,
  isDetachedBuffer,
} from './guards.js';
export type { TypedArray, TypedArrayCtor } from './guards.js';
export { now, makeTiming, median } from './timing.js';
export type { Timing } from './timing.js';
export { readEnumEnv } from './env.js';
export { writeFileAtomic } from './files.js';
export { Pacer } from './pace.js';
export { BufferCache } from './buffer-cache.js';
export { promptCollection } from './collect.js';
export { copyInto, NATIVE_COPY_MIN_BYTES } from './copy.js';
export { glStackConflict, markGlStackStarted } from './gl-stacks.js';
export type { GlStack } from './gl-stacks.js';
export type { CopyView } from './copy.js';
export { ResultArrays, ResultMemory, callsUntilResultsReused, resultsHeldBetweenCollections, HELD_PER_HEAP_BYTE, HELD_RESULT_BYTES, KEEP_BYTES, RESULT_MIN_BYTES, type ResultMemoryStats } from './result-memory.js';
export type { ResultCtor } from './result-memory.js';
