import type { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
import type { RunState } from './state.ts';
import type { OutputStream } from './types.ts';

/** What the pump of one of the command's streams (stdout or stderr) keeps: see pump.ts. */
export interface StreamState {
  run: RunState;
  stream: Readable;
  name: OutputStream;
  decoder: StringDecoder;
  /** Decoded output not split into lines yet. */
  buffer: string;
  ended: boolean;
  /** The log asked to wait (OutputBudget.ready): the stream is paused until it is ready. */
  waiting: boolean;
  done: boolean;
  /** Resolves the pump's promise. */
  finished: () => void;
  /** Past the budget: the last raw chunks, and their bytes. */
  skipping: boolean;
  kept: Buffer[];
  keptBytes: number;
  /** Whether the kept end no longer starts where the stream went past the budget. */
  cutFront: boolean;
  /** Set while the stream is left unread to keep the pace. */
  paceTimer: NodeJS.Timeout | undefined;
}
