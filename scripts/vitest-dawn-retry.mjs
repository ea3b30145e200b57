#!/usr/bin/env node
// `vitest run` for a package whose tests drive Dawn's node bindings (npm `webgpu`), run once more
// when, and only when, the first run died of a crash inside those bindings: a test worker's
// "FATAL ERROR: Error::New napi_get_last_error_info" under Dawn's event processing, with no test
// failed. It struck 3 of 48 runs of test/transfer.test.ts's failure tests on a loaded 2-core
// machine (never the abort or the device-loss test alone, 8 runs each); a failed assertion or any
// other crash fails at once. Both runs' output is printed, and the retry says why it ran.
import { spawn } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';

const DAWN_CRASH = 'FATAL ERROR: Error::New napi_get_last_error_info';

function vitest() {
  return new Promise((resolve) => {
    const child = spawn('npx', ['vitest', 'run', ...process.argv.slice(2)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; process.stdout.write(d); });
    child.stderr.on('data', (d) => { out += d; process.stderr.write(d); });
    child.on('close', (code) => resolve({ code: code ?? 1, out: stripVTControlCharacters(out) }));
  });
}

const first = await vitest();
const failedTests = /Tests\s+\d+ failed/.test(first.out);
if (first.code !== 0 && first.out.includes(DAWN_CRASH) && !failedTests) {
  process.stderr.write(`\nvitest-dawn-retry: a test worker died of Dawn's node-binding crash (${DAWN_CRASH}) with no test failed; running the suite once more\n\n`);
  process.exit((await vitest()).code);
}
process.exit(first.code);
