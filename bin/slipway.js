#!/usr/bin/env node
// The CLI entry: runs the compiled CLI (dist/cli, built by `npm install` and rebuilt here when a
// source changed since), so a command starts without compiling TypeScript.
import { freshCli } from './cli-bundle.js';

const { run } = await import(await freshCli());
process.exitCode = await run(process.argv.slice(2));
