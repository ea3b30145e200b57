import type { TestProjectInlineConfiguration } from 'vitest/config';

/** The vitest projects of `vitest-wasm-builds.mjs`: all tests on the runtime's own build, `otherBuildFiles` on the other. */
export declare function wasmBuildProjects(name: string, otherBuildFiles: readonly string[]): TestProjectInlineConfiguration[];
