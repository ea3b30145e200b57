import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { afterAll } from 'vitest';
import { probeGpujsModes } from '../src/index.js';

/**
 * Starts an Xvfb server for headless-gl and points DISPLAY at it (CI runs `npm test` without
 * xvfb-run). `-displayfd` makes Xvfb pick a free display and print its number when ready.
 * Returns the reason when Xvfb cannot start, so the caller can skip with it.
 */
export async function startXvfb(): Promise<{ stop: () => void } | string> {
  if (process.env.DISPLAY !== undefined && process.env.DISPLAY !== '') return { stop: () => {} };
  let child: ChildProcess;
  try {
    // `-terminate`: the server exits when its last client (headless-gl's display connection, held
    // until this process ends) goes, also where `stop` never runs: vitest skips afterAll hooks in
    // a file whose tests a `-t` filter leaves out, and a killed worker runs none.
    child = spawn('Xvfb', ['-displayfd', '1', '-terminate', '-screen', '0', '64x64x24', '-nolisten', 'tcp'], { stdio: ['ignore', 'pipe', 'ignore'] });
  } catch (e) {
    return `Xvfb cannot be spawned: ${(e as Error).message}`;
  }
  const display = await new Promise<string | Error>((resolve) => {
    let text = '';
    const timer = setTimeout(() => resolve(new Error('Xvfb did not report a display within 10 s')), 10_000);
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve(e);
    });
    child.stdout?.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('\n')) {
        clearTimeout(timer);
        resolve(text.trim());
      }
    });
  });
  if (display instanceof Error) {
    child.kill();
    return `Xvfb is not available (${display.message}); install xvfb to test headlessgl`;
  }
  process.env.DISPLAY = `:${display}`;
  child.unref();
  // With -terminate, the first client to leave would end the server: headless-gl's check in
  // probeGpujsModes is such a client (a child process). So this process holds a connection of its own.
  const held = await holdConnection(display);
  if (typeof held === 'string') {
    child.kill();
    return held;
  }
  return {
    stop: () => {
      child.kill();
    },
  };
}

/**
 * Opens a client connection to X display `display` (the 12-byte connection setup: little-endian,
 * protocol 11.0, no authorisation) and keeps it, unreferenced, until this process ends.
 */
async function holdConnection(display: string): Promise<Socket | string> {
  return new Promise((resolve) => {
    const socket = connect(`/tmp/.X11-unix/X${display}`);
    const fail = (why: string) => {
      socket.destroy();
      resolve(`Xvfb on :${display} did not accept a connection (${why}); install xvfb to test headlessgl`);
    };
    socket.once('error', (e) => fail(e.message));
    socket.once('connect', () => socket.write(Buffer.from([0x6c, 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0])));
    // The reply's first byte: 1 when the server accepted the client.
    socket.once('data', (d: Buffer) => {
      if (d[0] !== 1) return fail(`setup reply ${d[0]}`);
      socket.removeAllListeners('error');
      socket.on('error', () => {});
      socket.unref();
      resolve(socket);
    });
  });
}

/**
 * The preamble of a headless-gl test file: starts Xvfb (stopped after the file's tests) and
 * returns why headless-gl cannot run here, for the file to skip with, or undefined when it can.
 */
export async function headlessglSkipReason(): Promise<string | undefined> {
  const xvfb = await startXvfb();
  if (typeof xvfb === 'string') return xvfb;
  afterAll(() => xvfb.stop());
  const probe = (await probeGpujsModes()).headlessgl;
  return probe.available ? undefined : (probe.reason ?? 'unavailable');
}
