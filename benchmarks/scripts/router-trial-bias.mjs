// How far a router's trial of a backend is from that backend's own row in the same round (issue 16):
// for every router process of every committed run with rounds, each trial's ms ÷ the same round's
// median of that backend's fastest row, grouped by backend, by whether the trial came first in its
// process (the note lists trials in the order they began) and by the call's output size. Above 1:
// the trial ranked the backend below what it runs at in a process of its own.
//   node benchmarks/scripts/router-trial-bias.mjs [h100|h200|2core] [benchmarks/results]
import { committedRuns, median, noteTrials, RUN_FILES } from './committed-runs.mjs';

const machine = process.argv[2] ?? 'h100';
const dir = process.argv[3] ?? 'benchmarks/results';
const RUNS = ['h100', 'h200', '2core'].includes(machine) ? RUN_FILES[machine] : undefined;
if (RUNS === undefined) {
  console.error('usage: router-trial-bias.mjs [h100|h200|2core] [DIR]');
  process.exit(2);
}
const BIG = 256 * 2 ** 20;

const seen = [];
for (const { run } of committedRuns(dir, RUNS)) {
  const rows = (run.rows ?? []).filter((r) => r.status === 'ok' && Array.isArray(r.roundMediansMs));
  for (const router of rows.filter((r) => r.backend === 'kernelkit' && Array.isArray(r.roundRouterNotes))) {
    const size = router.outputBytes >= BIG ? 'big' : 'small';
    router.roundRouterNotes.forEach((note, round) => {
      noteTrials(note).forEach((t, order) => {
        // The row of the trial's own variant, the round it ran beside this router process.
        const own = rows.find((r) => r.caseId === router.caseId && r.backend === t.backend && r.variant === t.variant);
        const ms = own?.roundMediansMs.length === router.roundRouterNotes.length ? own.roundMediansMs[round] : undefined;
        if (ms !== undefined) seen.push({ key: `${t.backend} | ${order === 0 ? 'first' : 'later'} | ${size}`, ratio: t.ms / ms });
      });
    });
  }
}
const groups = new Map();
for (const s of seen) groups.set(s.key, [...(groups.get(s.key) ?? []), s]);
console.log(`${seen.length} trials with their own row's round, ${machine}`);
console.log('| backend | trial began | output | trials | median trial ÷ own round | trials over 1.2× |');
console.log('|---|---|---|---|---|---|');
for (const key of [...groups.keys()].sort()) {
  const g = groups.get(key).map((s) => s.ratio);
  console.log(`| ${key} | ${g.length} | ${median(g).toFixed(3)} | ${g.filter((r) => r > 1.2).length} |`);
}
