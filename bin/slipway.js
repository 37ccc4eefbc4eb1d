#!/usr/bin/env node
// The CLI entry: registers the TypeScript loader so the bin works straight after `npm install`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
const { processIo } = await import('../cli/io.ts');
process.exitCode = await main(process.argv.slice(2), processIo());
