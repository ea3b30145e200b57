import type { CalibrationSample, TimeFit, TransferFit } from './cost-model.js';

/** Times below this count as this in the weights: below a timer's resolution relative error means nothing. */
const MIN_WEIGHTED_MS = 0.01;

type Term = 'fixedMs' | 'msPerWork' | 'msPerPass' | 'msPerByte';
const feature: Record<Term, (s: CalibrationSample) => number> = { fixedMs: () => 1, msPerWork: (s) => s.work, msPerPass: (s) => s.passes, msPerByte: (s) => s.bytes ?? 0 };

/** Whether the samples' bytes vary apart from their work (by more than this relative spread): else a bytes term is the work term again. */
const BYTES_APART = 0.05;

function bytesVaryApart(samples: readonly CalibrationSample[]): boolean {
  if (!samples.every((s) => s.bytes !== undefined && s.bytes > 0 && s.work > 0)) return false;
  const ratios = samples.map((s) => s.bytes! / s.work);
  return Math.max(...ratios) > (1 + BYTES_APART) * Math.min(...ratios);
}

/**
 * Solves the normal equations of least squares over `terms` (Gaussian elimination) in relative
 * error: each sample weighted by 1/ms², so a call of a millisecond is fitted as closely as one
 * of a hundred (in absolute error the largest sample sets the fit, and a small call could be
 * predicted several times off its own measurement). Undefined when singular.
 */
function leastSquares(samples: readonly CalibrationSample[], terms: readonly Term[]): number[] | undefined {
  const n = terms.length;
  // Columns are scaled to their largest value so work counts of 1e9 and a column of ones stay well conditioned.
  const scale = terms.map((t) => Math.max(...samples.map((s) => Math.abs(feature[t](s)))) || 1);
  const a = Array.from({ length: n }, () => new Array<number>(n + 1).fill(0));
  // Weights relative to the shortest sample's, so the largest is 1 and the singularity test keeps its scale.
  const shortest = Math.max(MIN_WEIGHTED_MS, Math.min(...samples.map((s) => s.ms)));
  for (const s of samples) {
    const x = terms.map((t, i) => feature[t](s) / scale[i]!);
    const weight = (shortest / Math.max(s.ms, MIN_WEIGHTED_MS)) ** 2;
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) a[i]![j]! += weight * x[i]! * x[j]!;
      a[i]![n]! += weight * x[i]! * s.ms;
    }
  }
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[p]![c]!)) p = r;
    if (Math.abs(a[p]![c]!) < 1e-12) return undefined;
    [a[c], a[p]] = [a[p]!, a[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k <= n; k++) a[r]![k]! -= f * a[c]![k]!;
    }
  }
  return terms.map((_, i) => a[i]![n]! / a[i]![i]! / scale[i]!);
}

/**
 * Fits `ms ≈ fixedMs + msPerWork·work + msPerPass·passes + msPerByte·bytes` with every
 * coefficient >= 0: a term that comes out negative (noise on few samples) is dropped and the rest
 * refitted. The passes term is only fitted when the samples vary in passes independently of work,
 * and the bytes term when they carry bytes (see CalibrationSample) that vary apart from work and
 * there is a sample for every term.
 */
export function fitTime(samples: readonly CalibrationSample[]): TimeFit {
  const zero: TimeFit = { fixedMs: 0, msPerWork: 0, msPerPass: 0 };
  if (samples.length === 0) return zero;
  const works = new Set(samples.map((s) => s.work));
  if (samples.length === 1 || works.size === 1) {
    // One size: all of the time is charged to the work, which over-predicts small calls rather than under-predicting big ones.
    const w = samples.reduce((acc, s) => acc + s.work, 0);
    const ms = samples.reduce((acc, s) => acc + s.ms, 0);
    return { ...zero, msPerWork: w > 0 ? ms / w : 0, fixedMs: w > 0 ? 0 : ms / samples.length };
  }
  let terms: Term[] = new Set(samples.map((s) => s.passes)).size > 1 && samples.length >= 3 ? ['fixedMs', 'msPerWork', 'msPerPass'] : ['fixedMs', 'msPerWork'];
  if (samples.length > terms.length && bytesVaryApart(samples)) terms.push('msPerByte');
  while (terms.length > 0) {
    const coef = leastSquares(samples, terms);
    if (coef === undefined) {
      terms = terms.slice(0, -1);
      continue;
    }
    const negative = coef.findIndex((c) => c < 0);
    if (negative < 0) return { ...zero, ...Object.fromEntries(terms.map((t, i) => [t, coef[i]!])) };
    // Time falling with work is noise: then the work term alone (through the origin) is the honest
    // fit, or, where bytes are fitted, the time is the copies' and the work term goes.
    if (terms[negative] === 'msPerWork') terms = terms.includes('msPerByte') ? terms.filter((t) => t !== 'msPerWork') : ['msPerWork'];
    else terms = terms.filter((_, i) => i !== negative);
  }
  return zero;
}

/** A transfer fit from (bytes, ms) pairs, same rules: non-negative, and zero for a backend whose copies cost nothing measurable. */
export function fitTransfer(points: readonly { readonly bytes: number; readonly ms: number }[]): TransferFit {
  const f = fitTime(points.map((p) => ({ work: p.bytes, passes: 1, ms: Math.max(0, p.ms) })));
  return { fixedMs: f.fixedMs, msPerByte: f.msPerWork };
}
