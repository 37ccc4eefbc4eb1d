import { countFiles, formatBytes } from '../api/upload/format.ts';
import type { UploadProgress } from '../api/upload/upload-files.ts';
import type { Io } from './io.ts';

/**
 * Upload progress on standard error: on a terminal one line rewritten in place, elsewhere
 * (CI logs) a line at each tenth of the way.
 */
export function uploadProgress(io: Io): (p: UploadProgress) => void {
  let shownTenth = -1;
  return (p) => {
    if (p.sent.files === 0) {
      const have = p.total.files - p.toSend.files;
      io.err(
        `Uploading ${countFiles(p.total.files)} (${formatBytes(p.total.bytes)}): ` +
          `${countFiles(p.toSend.files)} to send (${formatBytes(p.toSend.bytes)}), ${countFiles(have)} already there\n`,
      );
      return;
    }
    const line = `Sent ${p.sent.files}/${p.toSend.files} files (${formatBytes(p.sent.bytes)} of ${formatBytes(p.toSend.bytes)})`;
    const last = p.sent.files === p.toSend.files;
    if (io.errIsTty) {
      io.err(`\r\x1b[2K${line}${last ? '\n' : ''}`);
      return;
    }
    const tenth = Math.floor((p.sent.bytes / Math.max(1, p.toSend.bytes)) * 10);
    if (last || tenth > shownTenth) {
      shownTenth = tenth;
      io.err(`${line}\n`);
    }
  };
}
