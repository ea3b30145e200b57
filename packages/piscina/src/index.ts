export { createPiscinaBackend } from './backend.js';
export { CALLER_SHARE_MAX_WORK, DEFAULT_INLINE_BELOW } from './options.js';
export type { PiscinaBackendOptions } from './options.js';
