export { createPiscinaBackend } from './backend.js';
export { DEFAULT_INLINE_BELOW } from './options.js';
export type { PiscinaBackendOptions } from './options.js';
export { CALLER_SHARE_MAX_WORK } from './caller-share.js';
