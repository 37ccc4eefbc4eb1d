import { processIo } from './io.ts';
import { main } from './main.ts';

/** What bin/slipway.js runs (compiled into dist/cli): one command line in this process. */
export const run = (argv: string[]): Promise<number> => main(argv, processIo());
