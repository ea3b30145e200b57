/** Formats an evaluation the way the ECE408 course reports print theirs ("Op Time: … ms", "Correctness: …"). */
import type { Evaluation } from './evaluate.js';

const ms = (v: number): string => `${v.toFixed(3)} ms`;
const kind = (k: 'kernel' | 'end-to-end'): string => (k === 'kernel' ? 'kernel time reported by the backend' : 'end-to-end convLayer call, the backend reports no kernel time');

export function formatEvaluation(e: Evaluation, notes: readonly string[]): string {
  return [
    `Backend: ${e.backend}, variant: ${e.variant}`,
    ...notes.map((n) => `  (${n})`),
    `Op Time: ${ms(e.conv1.ms)}  (layer 1: conv 1→4, K=7, on 86×86; ${kind(e.conv1.kind)})`,
    `Op Time: ${ms(e.conv2.ms)}  (layer 2: conv 4→16, K=7, on 40×40; ${kind(e.conv2.kind)})`,
    `Layers: ${e.chain}`,
    e.gpuChain
      ? `GPU pools: ${ms(e.gpuChain.poolMs)}; readback of pool 2: ${ms(e.gpuChain.readbackMs)}; CPU layers (FC, argmax): ${ms(e.cpuMs)}; resize 28→86: ${ms(e.preprocessMs)}`
      : `CPU layers (pool, FC, argmax): ${ms(e.cpuMs)}; resize 28→86: ${ms(e.preprocessMs)}`,
    `Total time: ${ms(e.totalMs)}`,
    `Correctness: ${e.accuracy.toFixed(4)} (${e.correct}/${e.count})`,
  ].join('\n');
}

/** The JSON form: everything but the per-image predictions. */
export function evaluationJson(e: Evaluation, notes: readonly string[]): Record<string, unknown> {
  const { predictions: _predictions, ...rest } = e;
  return { ...rest, notes };
}
