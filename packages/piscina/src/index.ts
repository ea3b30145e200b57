export { createPiscinaBackend } from './backend.js';
export { CALLER_SHARE_MAX_WORK, IN_PLACE_RESULT_MAX_BYTES, DEFAULT_INLINE_BELOW } from './options.js';
export type { PiscinaBackendOptions } from './options.js';
