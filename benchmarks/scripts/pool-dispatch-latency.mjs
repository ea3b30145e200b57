// What a pooled call pays to reach a worker and hear back, beyond its work: one Piscina task per
// call (the worker parks in Atomics.wait between tasks, as Piscina's workers do) against a resident
// task that spins on a shared doorbell word for up to SPIN_MS after each job, as onnxruntime's and
// OpenMP's pools spin between parallel regions. One worker; each call does WORK_MS of busy work
// after GAP_MS of busy work on this thread. Prints one JSON line per (work, gap): medians of the
// per-call overhead (call time − work) in ms, and how often the resident worker had parked.
//   node benchmarks/scripts/pool-dispatch-latency.mjs [WORK_MS,…=0.5,2] [GAP_MS,…=0,0.1,1] [CALLS=200] [SPIN_MS=1]
import { isMainThread } from 'node:worker_threads';
import { median } from '@kernelkit/core';
import { Piscina } from 'piscina';

// Doorbell words: JOBS (bumped by the caller per job), DONE (bumped by the worker per job), STATE.
const JOBS = 0, DONE = 1, STATE = 2, WORDS = 3;
const PARKED = 0, SPINNING = 1, TAKEN = 2;
const busy = (ms) => { const end = performance.now() + ms; while (performance.now() < end); };

export default function task({ ms, resident, spinMs, ctrl }) {
  busy(ms);
  if (!resident) return;
  const w = new Int32Array(ctrl);
  // JOBS moves only after a caller has taken the seat, which it can do only once SPINNING is set:
  // read here, it is the count the next job changes.
  for (let seen = Atomics.load(w, JOBS); ; seen = Atomics.load(w, JOBS)) {
    Atomics.store(w, STATE, SPINNING);
    Atomics.add(w, DONE, 1);
    const deadline = performance.now() + spinMs;
    for (let k = 1; Atomics.load(w, JOBS) === seen; k++) {
      // Parks only from SPINNING: a caller that took it (TAKEN) has a job on the way.
      if ((k & 1023) === 0 && performance.now() > deadline && Atomics.compareExchange(w, STATE, SPINNING, PARKED) === SPINNING) return;
    }
    busy(ms);
  }
}

if (isMainThread) {
  const [works = '0.5,2', gaps = '0,0.1,1', callsArg = '200', spinArg = '1'] = process.argv.slice(2);
  const calls = Number(callsArg), spinMs = Number(spinArg);
  const pool = new Piscina({ filename: import.meta.url, minThreads: 1, maxThreads: 1, idleTimeout: 60_000 });
  const yieldTurn = () => new Promise((resolve) => setImmediate(resolve));
  for (const ms of works.split(',').map(Number)) {
    for (const gap of gaps.split(',').map(Number)) {
      await pool.run({ ms, resident: false });
      const perTask = [];
      for (let i = 0; i < calls; i++) {
        busy(gap);
        const t0 = performance.now();
        await pool.run({ ms, resident: false });
        perTask.push(performance.now() - t0 - ms);
      }
      const ctrl = new SharedArrayBuffer(WORDS * Int32Array.BYTES_PER_ELEMENT);
      const w = new Int32Array(ctrl);
      const resident = [];
      let parked = 0;
      let lastResident = Promise.resolve();
      for (let i = 0; i < calls; i++) {
        busy(gap);
        const t0 = performance.now();
        const done = Atomics.load(w, DONE);
        if (Atomics.compareExchange(w, STATE, SPINNING, TAKEN) === SPINNING) {
          Atomics.add(w, JOBS, 1);
          while (Atomics.load(w, DONE) === done);
        } else {
          parked++;
          lastResident = pool.run({ ms, resident: true, spinMs, ctrl });
          while (Atomics.load(w, DONE) === done) await yieldTurn();
        }
        resident.push(performance.now() - t0 - ms);
      }
      // The resident task parks and ends before the next case's plain tasks.
      await lastResident;
      const r = (x) => +x.toFixed(4);
      console.log(JSON.stringify({ workMs: ms, gapMs: gap, calls, spinMs, perTaskMs: r(median(perTask)), residentMs: r(median(resident)), residentParked: parked }));
    }
  }
  await pool.destroy();
}
