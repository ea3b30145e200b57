import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '@kernelkit/core';

/**
 * The tuning cache on disk:
 * `{ version, adapters: { [adapterKey]: { [key]: { name, config, timings, measuredAt } } } }`.
 * A cache is an optimisation: a file that is missing, unreadable, corrupt or of another version
 * is ignored (with a note) and rewritten by the next sweep, never an error.
 */
export const TUNING_CACHE_VERSION = 1;

/** One tuned shape class: the winner's name and config, every candidate's median ms, and when. */
export interface TuneRecord {
  readonly name: string;
  readonly config: unknown;
  readonly timings: Readonly<Record<string, number>>;
  /** ISO 8601. */
  readonly measuredAt: string;
}

export type AdapterRecords = Readonly<Record<string, TuneRecord>>;

export interface TuningCacheContents {
  readonly adapters: Readonly<Record<string, AdapterRecords>>;
  /** Why (part of) the file was ignored; absent when it was read cleanly or did not exist. */
  readonly note?: string;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isRecord(v: unknown): v is TuneRecord {
  if (!isPlainObject(v) || typeof v['name'] !== 'string' || typeof v['measuredAt'] !== 'string' || !('config' in v)) return false;
  const t = v['timings'];
  return isPlainObject(t) && Object.values(t).every((ms) => typeof ms === 'number' && Number.isFinite(ms) && ms >= 0);
}

/** Validates parsed JSON; malformed records are dropped one by one, a malformed skeleton drops the file. */
export function parseTuningCache(text: string, path: string): TuningCacheContents {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { adapters: {}, note: `tuning cache ${path} ignored: not JSON (${(e as Error).message})` };
  }
  if (!isPlainObject(json)) return { adapters: {}, note: `tuning cache ${path} ignored: not a JSON object` };
  if (json['version'] !== TUNING_CACHE_VERSION) {
    return { adapters: {}, note: `tuning cache ${path} ignored: version ${JSON.stringify(json['version'])}, expected ${TUNING_CACHE_VERSION}` };
  }
  const adapters = json['adapters'];
  if (!isPlainObject(adapters)) return { adapters: {}, note: `tuning cache ${path} ignored: no "adapters" object` };
  const out: Record<string, Record<string, TuneRecord>> = {};
  let dropped = 0;
  for (const [adapter, records] of Object.entries(adapters)) {
    if (!isPlainObject(records)) {
      dropped++;
      continue;
    }
    const kept: Record<string, TuneRecord> = {};
    for (const [key, r] of Object.entries(records)) {
      if (isRecord(r)) kept[key] = r;
      else dropped++;
    }
    out[adapter] = kept;
  }
  return dropped === 0 ? { adapters: out } : { adapters: out, note: `tuning cache ${path}: ignored ${dropped} malformed entr${dropped === 1 ? 'y' : 'ies'}` };
}

/** Reads the cache file; a missing file is an empty cache without a note. */
export async function readTuningCache(path: string): Promise<TuningCacheContents> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    // Nothing there yet (ENOTDIR: a parent is a file; the write will say so) is an empty cache, not news.
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { adapters: {} };
    return { adapters: {}, note: `tuning cache ${path} ignored: ${(e as Error).message}` };
  }
  return parseTuningCache(text, path);
}

/**
 * Merges `records` into the file's entries for `adapterKey` and replaces the file atomically
 * (temp file + rename), so a reader never sees half a file. The file is re-read first so entries
 * another process or backend wrote since we loaded it survive; ours win on the same key.
 * Rejects on I/O errors (the caller turns them into a note).
 */
export async function writeTuningCache(path: string, adapterKey: string, records: AdapterRecords): Promise<void> {
  const current = await readTuningCache(path);
  const adapters = { ...current.adapters, [adapterKey]: { ...current.adapters[adapterKey], ...records } };
  const text = JSON.stringify({ version: TUNING_CACHE_VERSION, adapters }, null, 2) + '\n';
  await writeFileAtomic(path, text);
}
