import os from 'node:os';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { writeFileAtomic } from '@kernelkit/core';
import { wasmSupport } from '@kernelkit/cpu';
import { OP_NAMES } from '@kernelkit/ops';
import { BACKEND_NAMES } from '../names.js';
import type { BackendCost } from './cost-model.js';
import type { MeasuredChoice } from './explore.js';

/** Bumped when the file's shape or the calibration sizes change: older files are re-measured. */
export const CALIBRATION_FORMAT_VERSION = 8;
export const CALIBRATION_CACHE_ENV = 'KERNELKIT_CALIBRATION_CACHE';

/** What makes timings from one machine (or one kernelkit release) useless on another. */
export interface MachineIdentity {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly node: string;
  /** The packages are versioned together: another release has other kernels. */
  readonly kernelkit: string;
  /** The CPU backends' kernel build (`KERNELKIT_WASM_SIMD`): the fused one runs faster. */
  readonly cpuKernels: string;
}

const KERNELKIT_VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

export function machineIdentity(): MachineIdentity {
  const cpus = os.cpus();
  return { cpu: cpus[0]?.model.trim() ?? 'unknown', cores: cpus.length, memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10, node: process.version, kernelkit: KERNELKIT_VERSION, cpuKernels: cpuKernels() };
}

export const machineKey = (m: MachineIdentity): string => `${m.cpu} | ${m.cores} cores | ${m.memoryGiB} GiB | Node ${m.node} | kernelkit ${m.kernelkit} | cpu ${m.cpuKernels}`;

function cpuKernels(): string {
  const s = wasmSupport();
  return 'module' in s ? `wasm ${s.flavour}` : 'js';
}

/** `KERNELKIT_CALIBRATION_CACHE`, else `$XDG_CACHE_HOME/kernelkit/calibration.json`, else `~/.cache/kernelkit/calibration.json`. */
export function defaultCalibrationPath(env: NodeJS.ProcessEnv = process.env): string {
  const own = env[CALIBRATION_CACHE_ENV];
  if (own !== undefined && own !== '') return own;
  const xdg = env['XDG_CACHE_HOME'];
  return join(xdg !== undefined && xdg !== '' ? xdg : join(os.homedir(), '.cache'), 'kernelkit', 'calibration.json');
}

/** Measured choices per routing key (explore.ts routingKey), for one set of candidate backends. */
export type MeasuredChoices = Readonly<Record<string, MeasuredChoice>>;

export interface MachineEntry {
  readonly machine: MachineIdentity;
  readonly backends: Readonly<Record<string, BackendCost>>;
  /** Keyed by `candidateSet`: a choice among these backends says nothing about another set. */
  readonly choices?: Readonly<Record<string, MeasuredChoices>>;
}

export interface CalibrationFile {
  readonly version: number;
  /** Keyed by `machineKey`; each machine's backends keyed by `BackendCost.key` (backend + adapter or workers). */
  readonly machines: Readonly<Record<string, MachineEntry>>;
}

/** The key of a set of candidate backends: their cache keys, sorted. */
export const candidateSet = (backendKeys: readonly string[]): string => [...backendKeys].sort().join(' + ');

export interface CacheRead {
  readonly file: CalibrationFile;
  /** Why the file was not used, when it was there but not usable. */
  readonly note?: string;
}

const empty = (): CalibrationFile => ({ version: CALIBRATION_FORMAT_VERSION, machines: {} });
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A fit's optional `msPerByte`: absent, or a finite non-negative number. */
const optionalRate = (fit: unknown): boolean => isObject(fit) && (fit['msPerByte'] === undefined || isFit(fit, ['msPerByte']));
const isFit = (v: unknown, keys: readonly string[]): boolean => isObject(v) && keys.every((k) => typeof v[k] === 'number' && Number.isFinite(v[k]) && (v[k] as number) >= 0);

/** Only entries a prediction can trust survive: finite, non-negative numbers where numbers belong. */
function isBackendCost(v: unknown): v is BackendCost {
  if (!isObject(v) || typeof v['key'] !== 'string' || typeof v['startMs'] !== 'number' || !Number.isFinite(v['startMs'])) return false;
  if (!isFit(v['upload'], ['fixedMs', 'msPerByte']) || !isFit(v['download'], ['fixedMs', 'msPerByte'])) return false;
  if (!isObject(v['variants']) || !isObject(v['ops'])) return false;
  return Object.entries(v['ops']).every(
    ([op, byVariant]) =>
      (OP_NAMES as readonly string[]).includes(op) && isObject(byVariant) && Object.values(byVariant).every((c) => isObject(c) && isFit(c['fit'], ['fixedMs', 'msPerWork', 'msPerPass']) && optionalRate(c['fit']) && Array.isArray(c['samples'])),
  );
}

const isTrial = (v: unknown): boolean => isFit(v, ['ms', 'work']) && Number.isInteger((v as Record<string, unknown>)['calls']) && ((v as Record<string, number>)['calls'] ?? 0) >= 1;

function isMeasuredChoice(v: unknown): v is MeasuredChoice {
  return (
    isObject(v) && (BACKEND_NAMES as readonly unknown[]).includes(v['backend']) && typeof v['variant'] === 'string' && isObject(v['trials']) && Object.values(v['trials']).every(isTrial)
  );
}

const warned = new Set<string>();

/** One process warning per file: a broken cache is worth knowing about, not worth repeating. */
function warnOnce(path: string, text: string): void {
  if (warned.has(path)) return;
  warned.add(path);
  process.emitWarning(text, { code: 'KERNELKIT_CALIBRATION_CACHE' });
}

/**
 * Reads the cache. Missing: empty, no note. Another format version: empty with a note (it is
 * re-measured and overwritten). Corrupt: empty with a note and one process warning. Never throws.
 */
export async function readCalibrationCache(path: string): Promise<CacheRead> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { file: empty() };
    const note = `calibration cache ${path} ignored: ${(e as Error).message}`;
    warnOnce(path, note);
    return { file: empty(), note };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    const note = `calibration cache ${path} ignored: not JSON (${(e as Error).message}); it will be re-measured`;
    warnOnce(path, note);
    return { file: empty(), note };
  }
  if (isObject(json) && typeof json['version'] === 'number' && json['version'] !== CALIBRATION_FORMAT_VERSION) {
    return { file: empty(), note: `calibration cache ${path} is format ${json['version']}, this kernelkit writes ${CALIBRATION_FORMAT_VERSION}: re-measuring` };
  }
  if (!isObject(json) || json['version'] !== CALIBRATION_FORMAT_VERSION || !isObject(json['machines'])) {
    const note = `calibration cache ${path} ignored: not a kernelkit calibration file; it will be re-measured`;
    warnOnce(path, note);
    return { file: empty(), note };
  }
  const machines: Record<string, CalibrationFile['machines'][string]> = {};
  let dropped = 0;
  for (const [key, entry] of Object.entries(json['machines'])) {
    if (!isObject(entry) || !isObject(entry['machine']) || !isObject(entry['backends'])) {
      dropped++;
      continue;
    }
    const backends: Record<string, BackendCost> = {};
    for (const [bk, cost] of Object.entries(entry['backends'])) {
      if (isBackendCost(cost)) backends[bk] = cost;
      else dropped++;
    }
    const choices: Record<string, Record<string, MeasuredChoice>> = {};
    for (const [set, byKey] of Object.entries(isObject(entry['choices']) ? entry['choices'] : {})) {
      if (!isObject(byKey)) {
        dropped++;
        continue;
      }
      const kept: Record<string, MeasuredChoice> = {};
      for (const [rk, c] of Object.entries(byKey)) {
        if (isMeasuredChoice(c)) kept[rk] = c;
        else dropped++;
      }
      choices[set] = kept;
    }
    machines[key] = { machine: entry['machine'] as unknown as MachineIdentity, backends, ...(Object.keys(choices).length ? { choices } : {}) };
  }
  if (dropped > 0) {
    const note = `calibration cache ${path}: ignored ${dropped} malformed entr${dropped === 1 ? 'y' : 'ies'}; they will be re-measured`;
    warnOnce(path, note);
    return { file: { version: CALIBRATION_FORMAT_VERSION, machines }, note };
  }
  return { file: { version: CALIBRATION_FORMAT_VERSION, machines } };
}

/** The cached cost of one backend on this machine, if any. */
export function cachedBackend(file: CalibrationFile, machine: MachineIdentity, backendKey: string): BackendCost | undefined {
  return file.machines[machineKey(machine)]?.backends[backendKey];
}

/**
 * Merges `costs` into the file at `path` (re-read first: another process may have added a
 * machine) and replaces it atomically: written to a temporary file beside it, then renamed, so
 * a reader never sees half a file.
 */
export async function writeCalibrationCache(path: string, machine: MachineIdentity, costs: readonly BackendCost[]): Promise<void> {
  await updateMachine(path, machine, (entry) => {
    const backends = { ...entry.backends };
    for (const c of costs) backends[c.key] = c;
    return { ...entry, backends };
  });
}

/** The measured choices cached for this machine and candidate set. */
export function cachedChoices(file: CalibrationFile, machine: MachineIdentity, set: string): MeasuredChoices {
  return file.machines[machineKey(machine)]?.choices?.[set] ?? {};
}

/** Merges measured choices for one candidate set into the file, as `writeCalibrationCache` does backends. */
export async function writeMeasuredChoices(path: string, machine: MachineIdentity, set: string, choices: MeasuredChoices): Promise<void> {
  await updateMachine(path, machine, (entry) => ({ ...entry, choices: { ...entry.choices, [set]: { ...entry.choices?.[set], ...choices } } }));
}

/** Drops every measured choice of this machine: a forced calibration re-measures the backends they were chosen between. */
export async function clearMeasuredChoices(path: string, machine: MachineIdentity): Promise<void> {
  await updateMachine(path, machine, ({ choices: _dropped, ...entry }) => entry);
}

async function updateMachine(path: string, machine: MachineIdentity, update: (entry: MachineEntry) => MachineEntry): Promise<void> {
  const { file } = await readCalibrationCache(path);
  const key = machineKey(machine);
  const entry = update(file.machines[key] ?? { machine, backends: {} });
  const next: CalibrationFile = { version: CALIBRATION_FORMAT_VERSION, machines: { ...file.machines, [key]: { ...entry, machine } } };
  await writeFileAtomic(path, JSON.stringify(next, null, 2) + '\n');
}
