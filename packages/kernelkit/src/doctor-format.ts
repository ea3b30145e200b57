import type { AdapterInfo } from '@kernelkit/ops';
import type { DoctorReport } from './doctor.js';
import { formatCostModel, formatMeasuredChoices } from './router/bands.js';

/** Limits worth a line in the doctor output: the ones kernels size their tiles and buffers by. */
const KEY_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
  'subgroupMinSize',
  'subgroupMaxSize',
];

function formatAdapter(a: AdapterInfo): string[] {
  const limits = KEY_LIMITS.filter((k) => a.limits[k] !== undefined).map((k) => `${k}=${a.limits[k]}`);
  return [
    `  adapter:  ${a.description || '(no description)'} — vendor ${a.vendor || '?'}, architecture ${a.architecture || '?'}, ${a.software ? 'SOFTWARE' : 'hardware'}`,
    `  features: ${a.features.length ? a.features.join(', ') : '(none)'}`,
    `  limits:   ${limits.join(', ') || '(none reported)'}`,
  ];
}

/** One line per gpu.js mode: `probeGpujsModes()` returns `{ [mode]: { available, reason? } }`. */
function formatGpujsModes(modes: unknown): string[] {
  if (typeof modes !== 'object' || modes === null) return [`  ${String(modes)}`];
  const width = Math.max(...Object.keys(modes).map((m) => m.length));
  return Object.entries(modes).map(([mode, probe]) => {
    const p = (typeof probe === 'object' && probe !== null ? probe : {}) as { available?: unknown; reason?: unknown };
    const reason = typeof p.reason === 'string' ? ` — ${p.reason}` : '';
    return `  ${mode.padEnd(width)}  ${p.available === true ? 'available' : 'unavailable'}${reason}`;
  });
}

export function formatDoctor(r: DoctorReport): string {
  const lines: string[] = [];
  const m = r.machine;
  lines.push(`machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}`, '', 'backends:');
  for (const b of r.backends) {
    if (b.status === 'available') {
      lines.push(`  ${b.backend.padEnd(8)} available   ${b.info.description} (started in ${b.startMs.toFixed(0)} ms)`);
      if (b.info.threads !== undefined) lines.push(`           threads: ${b.info.threads}`);
      if (b.info.mode !== undefined) lines.push(`           mode: ${b.info.mode}`);
      lines.push(`           variants: ${Object.entries(b.variants).map(([op, v]) => `${op}[${v.join(',')}]`).join(' ')}`);
    } else {
      lines.push(`  ${b.backend.padEnd(8)} unavailable ${b.reason}`);
    }
  }
  lines.push('', 'webgpu probe:');
  if (r.webgpuProbe.status === 'ok') {
    const p = r.webgpuProbe.value;
    lines.push(`  available: ${p.available}${p.software === undefined ? '' : `, software: ${p.software}`}${p.reason ? ` — ${p.reason}` : ''}`);
    if (p.adapter) lines.push(...formatAdapter(p.adapter));
    if (p.gpus) lines.push(`  GPUs:     ${p.gpus.usable} usable with devices: 'all' (told apart ${p.gpus.toldApart}); ${p.gpus.onHost === undefined ? 'PCI bus not readable' : `${p.gpus.onHost} on the PCI bus`}`);
  } else lines.push(`  errored: ${r.webgpuProbe.message}`);
  const pool = r.backends.find((b) => b.backend === 'piscina');
  lines.push('', `piscina workers: ${pool?.status === 'available' ? String(pool.info.threads ?? '?') : 'n/a'}`);
  if (r.gpujsModes.status === 'ok') lines.push('gpu.js modes:', ...formatGpujsModes(r.gpujsModes.value));
  else lines.push(`gpu.js modes: errored: ${r.gpujsModes.message}`);
  lines.push(`gl (headless-gl): ${r.gl.status === 'ok' ? `loads${r.gl.value.version ? ` (v${r.gl.value.version})` : ''} (whether it makes a context: headlessgl above)` : `does not load: ${r.gl.message.split('\n')[0]}`}`);
  lines.push('');
  if (r.calibration.status === 'ok') {
    lines.push(`calibration (${r.calibration.value.path}):`);
    if (r.calibration.value.note !== undefined) lines.push(`  ${r.calibration.value.note}`);
    lines.push(...formatCostModel(r.calibration.value.model), '', '  measured choices (exploring auto-routed calls; these override the picks above for their key):');
    lines.push(...formatMeasuredChoices(r.calibration.value.model, r.calibration.value.choices), '');
  } else lines.push(`calibration: errored: ${r.calibration.message}`, '');
  if (r.autoSelection.status === 'ok') {
    lines.push(`auto-selection picks: ${r.autoSelection.selected} (with route: 'fixed'; auto-routing's fallback for an op with no prediction)`);
    for (const s of r.autoSelection.skipped) lines.push(`  skipped ${s.backend}: ${s.reason}`);
  } else lines.push(`auto-selection failed: ${r.autoSelection.message}`);
  return lines.join('\n') + '\n';
}
