/**
 * Worker side of split.ts: prepares its pieces when told, then runs one when told and posts
 * back its busy milliseconds.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { preparePiece, WORKLOADS, type PieceKind, type Shared, type WasmModule, type WorkloadName } from './split-work.js';

const { module } = workerData as { module: WasmModule };
const pieces = new Map<string, () => void>();

type Message =
  | { readonly prepare: string; readonly workload: WorkloadName; readonly shared: Shared; readonly kind: PieceKind; readonly from: number; readonly to: number }
  | { readonly run: string };

parentPort!.on('message', (m: Message) => {
  if ('prepare' in m) {
    pieces.set(m.prepare, preparePiece(module, WORKLOADS[m.workload], m.shared, m.kind, m.from, m.to));
    parentPort!.postMessage({ ready: m.prepare });
    return;
  }
  const t0 = performance.now();
  pieces.get(m.run)!();
  parentPort!.postMessage({ ms: performance.now() - t0 });
});
