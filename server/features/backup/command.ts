import { parseArgs } from 'node:util';
import { loadConfig } from '../../platform/config.ts';
import { createBackup } from './backup.ts';
import { restoreBackup } from './restore.ts';

const say = (line: string) => void process.stderr.write(`${line}\n`);
const MiB = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

/** `slipway backup <folder | s3 URL> [--include-key] [--keep N]`: 0 made, 1 failed, 2 called wrongly. */
export async function backupCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { 'include-key': { type: 'boolean' }, keep: { type: 'string' } },
  });
  if (positionals.length !== 1) {
    say(
      "slipway: name one folder or s3:// URL to put the backup in, e.g. slipway backup /var/backups/slipway or slipway backup 's3://my-backups/slipway?region=eu-west-1'",
    );
    return 2;
  }
  const keep = values.keep === undefined ? undefined : Number(values.keep);
  if (keep !== undefined && !(Number.isInteger(keep) && keep >= 1)) {
    say(
      `slipway: --keep must be a whole number of backups of at least 1, e.g. --keep 7 (got "${values.keep}")`,
    );
    return 2;
  }
  try {
    const made = await createBackup(loadConfig(), {
      dest: positionals[0]!,
      includeKey: values['include-key'] === true,
      keep,
      now: new Date(),
      say,
    });
    const m = made.manifest;
    say(
      `Backed up to ${made.dir}: the database (${m.database.migration ?? 'no migrations'}) and ${m.files} artifact files (${MiB(m.bytes)}).`,
    );
    say(
      m.keyIncluded
        ? `Warning: the backup holds the encryption key (${m.keyFingerprint}): anyone who can read it can read every secret in it. Keep it where only you can read it, or back up without --include-key and keep the key apart.`
        : `The encryption key (fingerprint ${m.keyFingerprint}) is not in the backup: keep it apart, safely; restore needs it.`,
    );
    for (const old of made.removed) say(`Removed the older backup ${old} (--keep ${keep}).`);
    process.stdout.write(`${made.dir}\n`);
    return 0;
  } catch (err) {
    say(`slipway: ${(err as Error).message}`);
    return 1;
  }
}

/** `slipway restore <backup folder | its s3 URL>` into an empty service. */
export async function restoreCommand(args: string[]): Promise<number> {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} });
  if (positionals.length !== 1) {
    say(
      'slipway: name the backup folder or its s3:// URL, e.g. slipway restore /var/backups/slipway/slipway-backup-20261126T201500Z',
    );
    return 2;
  }
  try {
    const m = await restoreBackup(loadConfig(), positionals[0]!, say);
    say(`Restored the backup of ${m.createdAt}. Start the service: slipway serve`);
    return 0;
  } catch (err) {
    say(`slipway: ${(err as Error).message}`);
    return 1;
  }
}
