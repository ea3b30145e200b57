import { join } from 'node:path';
import { writeFileAtomic } from '@kernelkit/core';
import type { BenchReport } from '../types.js';
import { formatMarkdown } from './markdown.js';
import { renderCharts } from './svg.js';
import { machineSlug } from '../machine.js';
import { STDOUT } from 'kernelkit/cli-kit';

/** Write-then-rename, so a run killed mid-write (a device-time limit) leaves the previous file whole. */
export async function put(path: string, text: string): Promise<void> {
  await writeFileAtomic(path, text);
}

/** The GPU in the file name when WebGPU ran on hardware, so results from one host sort together. */
export function resultBaseName(r: BenchReport): string {
  const gpu = r.backends.find((b) => b.backend === 'webgpu' && b.status === 'ok');
  const info = gpu?.info as { software?: boolean; adapter?: { description?: string } } | undefined;
  const name = info && !info.software ? info.adapter?.description : undefined;
  return `${machineSlug(r.machine, name)}-${r.date.slice(0, 10)}`;
}

/** Writes every output `o` asks for (`-` as --json or --md: stdout); `charts: false` skips the SVGs (partial reports after each row). Returns the files written. */
export async function writeOutputs(r: BenchReport, o: { json?: string; md?: string; svg?: string; out?: string }, charts = true): Promise<string[]> {
  const written: string[] = [];
  const json = JSON.stringify(r, null, 2) + '\n';
  const md = formatMarkdown(r);
  for (const [target, text] of [[o.json, json], [o.md, md]] as const) {
    if (target === STDOUT) process.stdout.write(text);
    else if (target) await put(target, text).then(() => written.push(target));
  }
  const base = o.out ? join(o.out, resultBaseName(r)) : undefined;
  if (base) {
    await put(`${base}.json`, json);
    await put(`${base}.md`, md);
    written.push(`${base}.json`, `${base}.md`);
  }
  if (charts && (o.svg || base)) {
    for (const [op, svg] of await renderCharts(r)) {
      const path = o.svg ? join(o.svg, `${op}.svg`) : `${base}-${op}.svg`;
      await put(path, svg);
      written.push(path);
    }
  }
  return written;
}
