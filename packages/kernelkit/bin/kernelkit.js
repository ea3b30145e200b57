#!/usr/bin/env node
// npm links a bin at install time only when its file exists, and dist/ is built after that
// (the root "prepare" script), so the link points at this committed file, which loads the CLI.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('kernelkit: this package is not built (dist/cli.js is missing); run npm run build\n');
  process.exit(1);
}
await import(cli.href);
