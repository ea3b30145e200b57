import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { CalibrationProgress } from './calibrate.js';
import type { ChildMessage, ChildRequest } from './calibrate-child.js';

/** The report line of a calibration child. */
export type ChildReport = Extract<ChildMessage, { report: unknown }>;

/**
 * A calibration child that was still running at its time limit (a backend that hangs, a
 * device that never answers) and was stopped: the caller routes without its fits.
 */
export class CalibrationTimeoutError extends Error {
  override readonly name = 'CalibrationTimeoutError';
  constructor(readonly limitMs: number) {
    super(`the calibration child was still running after ${(limitMs / 1000).toFixed(limitMs < 10_000 ? 1 : 0)} s and was stopped`);
  }
}

/**
 * Starts `script` with the request as its one argument, passes its progress lines on, and
 * resolves with its report line once it exits cleanly; rejects on any other exit, and stops it
 * (SIGKILL: a process stuck in a native call may not see a gentler signal) once `limitMs` passes.
 */
export function runCalibrationChild(script: string, request: ChildRequest, limitMs: number, onProgress?: (p: CalibrationProgress) => void): Promise<ChildReport> {
  return new Promise<ChildReport>((resolve, reject) => {
    const child = spawn(process.execPath, [script, JSON.stringify(request)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let last: ChildReport | undefined;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, limitMs);
    // Native libraries print notices on stderr: kept only to explain a failure.
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => void (stderr = (stderr + d.toString()).slice(-2000)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      let m: ChildMessage;
      try {
        m = JSON.parse(line) as ChildMessage;
      } catch {
        return;
      }
      if ('progress' in m) onProgress?.(m.progress);
      else last = m;
    });
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (timedOut) reject(new CalibrationTimeoutError(limitMs));
      else if (code === 0 && last !== undefined) resolve(last);
      else reject(new Error(`exit code ${code}: ${stderr.trim().split('\n').slice(-3).join(' / ')}`));
    });
  });
}
