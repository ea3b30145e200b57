/** Runs a built CLI as a child process and insists that it exits by itself. */
import { spawn } from 'node:child_process';

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface SpawnOptions {
  /** Kill the child after this long; a live worker pool or GPU device would keep it running. */
  readonly timeoutMs?: number;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * `node <cli> ...args`, resolved when the process has exited and closed its output. Rejects, with
 * the captured stderr, when it is still running after `timeoutMs` (it is then killed).
 */
export function spawnCli(cli: string, args: readonly string[], o: SpawnOptions = {}): Promise<Exit> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: o.cwd, env: o.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) reject(new Error(`node ${cli} ${args.join(' ')} did not exit by itself within ${timeoutMs / 1000} s; stderr:\n${stderr}`));
      else resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Fails with the child's stderr unless it exited normally with `code`. */
export function expectExitCode(r: Exit, code: number): void {
  if (r.signal !== null || r.code !== code) {
    throw new Error(`expected exit code ${code}, got ${r.signal === null ? `exit code ${r.code}` : `signal ${r.signal}`}; stderr:\n${r.stderr}`);
  }
}
