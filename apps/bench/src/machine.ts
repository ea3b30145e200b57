import os from 'node:os';
import type { MachineInfo } from './types.js';

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  const cores = os.availableParallelism();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores,
    ...(cpus.length > cores ? { hostCores: cpus.length } : {}),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()} (${os.platform()}/${os.arch()})`,
    node: process.version,
    hostname: os.hostname(),
  };
}

/** `<machine>` in result file names: a short, file-safe slug of the CPU (and GPU when there is one). */
export function machineSlug(m: MachineInfo, gpu?: string): string {
  const slug = (s: string) => s.toLowerCase().replace(/\(r\)|\(tm\)|processor|cpu|@.*$/g, '').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  return [slug(m.cpu), `${m.cores}c`, ...(gpu ? [slug(gpu)] : [])].filter(Boolean).join('-');
}
