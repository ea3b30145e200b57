import { readdirSync, readFileSync } from 'node:fs';
import { InvalidArgumentError, assertInteger } from '@kernelkit/core';
import { describeAdapter, reopenAdapter, type OpenedAdapter } from './adapter.js';
import type { GpuDevice } from './device.js';

/** Most devices a backend opens for `devices: n` (each holds its own staging rings and pipelines). */
export const MAX_DEVICES = 16;

/**
 * How this process tells GPUs apart. Dawn's node bindings offer one adapter per request: the
 * `adapter=` flag of create() picks the first adapter whose name contains a string, and
 * requestAdapter picks by power preference. So a process reaches one GPU per distinct name
 * (a discrete and an integrated GPU, say); identical GPUs (two H100s) look the same and only the
 * first is reachable.
 */
export const HOW_GPUS_ARE_TOLD_APART = "by adapter name: Dawn's node bindings select adapters by name and power preference, so identical GPUs count once";

/** The adapters to open a device on: `n` on the opened adapter, or one per distinct GPU for 'all'. */
export async function devicesToOpen(opened: OpenedAdapter, devices: number | 'all'): Promise<OpenedAdapter[]> {
  if (devices === 'all') return distinctGpus(opened);
  assertInteger(devices, 'options.devices', 1, MAX_DEVICES);
  const out: OpenedAdapter[] = [opened];
  // An adapter makes one device only: each further device gets a fresh adapter of the same GPU.
  for (let i = 1; i < devices; i++) out.push({ ...opened, adapter: await reopenAdapter(opened) });
  return out;
}

/** The opened adapter plus, on the hardware path, the low-power adapter when it is another GPU. */
async function distinctGpus(opened: OpenedAdapter): Promise<OpenedAdapter[]> {
  if (opened.backend !== 'default') return [opened];
  const request: GPURequestAdapterOptions = { powerPreference: 'low-power' };
  const other = await opened.gpu.requestAdapter(request);
  if (other === null) return [opened];
  const info = describeAdapter(other);
  const same = info.vendor === opened.info.vendor && info.architecture === opened.info.architecture && info.description === opened.info.description;
  return same || info.software ? [opened] : [opened, { ...opened, adapter: other, info, request }];
}

/** Validates the `devices` option (a whole number 1 … MAX_DEVICES, or 'all'). */
export function assertDevicesOption(devices: unknown): void {
  if (devices === undefined || devices === 'all') return;
  if (typeof devices !== 'number') throw new InvalidArgumentError('options.devices', `must be a whole number from 1 to ${MAX_DEVICES} or 'all'`);
  assertInteger(devices, 'options.devices', 1, MAX_DEVICES);
}

/** "2 on NVIDIA H100" or the names of the GPUs, for the backend's description. */
export function describeDevices(gpus: readonly GpuDevice[]): string {
  const names = gpus.map((g) => g.info.description || g.info.vendor);
  return new Set(names).size === 1 ? `all on ${names[0]}` : names.join(', ');
}

/** How many GPUs `devices: 'all'` would use, and how they are told apart (for `doctor`). Opens adapters only, no device. */
export async function countGpus(opened: OpenedAdapter): Promise<{ gpus: number; toldApart: string }> {
  return { gpus: (await distinctGpus(opened)).length, toldApart: HOW_GPUS_ARE_TOLD_APART };
}

// PCI vendors whose display controllers are GPUs a compute backend could use (a server's BMC
// VGA, ASPEED or Matrox, is not one).
const GPU_VENDORS = new Set(['0x10de', '0x1002', '0x8086']);

/**
 * GPUs on the PCI bus (display controllers of NVIDIA, AMD or Intel, from /sys/bus/pci), or
 * undefined where sysfs is not readable (not Linux, a sandbox): what `doctor` compares the
 * devices the backend can use with.
 */
export function hostGpuCount(): number | undefined {
  try {
    let n = 0;
    for (const dev of readdirSync('/sys/bus/pci/devices')) {
      const cls = readFileSync(`/sys/bus/pci/devices/${dev}/class`, 'utf8').trim();
      const vendor = readFileSync(`/sys/bus/pci/devices/${dev}/vendor`, 'utf8').trim();
      if (cls.startsWith('0x03') && GPU_VENDORS.has(vendor)) n++;
    }
    return n;
  } catch {
    return undefined;
  }
}
