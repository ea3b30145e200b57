// The committed bench runs the router studies read (router-pool-margin.mjs, router-trial-bias.mjs).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** File names of each machine's committed runs. */
export const RUN_FILES = {
  h100: /^bench-seed-h100-.*\.json$/,
  h200: /^bench-seed-h200-.*\.json$/,
  gpu: /^bench-seed-h(100|200)-.*\.json$/,
  '2core': /^(local-2core|bench-small-router-2core).*\.json$/,
};

/** Each run in `dir` whose file name matches `pattern`, parsed, as { file, run }; a file that does not parse is left out. */
export function* committedRuns(dir, pattern) {
  for (const file of readdirSync(dir).filter((f) => pattern.test(f))) {
    let run;
    try {
      run = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    } catch {
      continue;
    }
    yield { file, run };
  }
}

/** The trials of a router note's "trials: ..." part, in the order they began: backend, variant, ms. */
export const noteTrials = (note) =>
  [...(note.split('predicted')[0].split('trials:')[1]?.matchAll(/(\w+)\/([\w-]+) ([\d.]+) ms/g) ?? [])].map((m) => ({ backend: m[1], variant: m[2], ms: Number(m[3]) }));

export const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
