import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { table } from './lib.ts';
import { spawnBenchServer } from './spawn-server.ts';

interface Info {
  apiUrl: string;
  token: string;
  projectId: string;
}

const BIN = resolve(import.meta.dirname, '../bin/slipway.js');
const FILES = 1000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A static site of `FILES` files (about 2 kB each) in 20 folders, unique to `salt`. */
function makeSite(dir: string, salt: string) {
  for (let i = 0; i < FILES; i++) {
    const folder = join(dir, `section-${i % 20}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      join(folder, `page-${i}.html`),
      `<p>${salt} page ${i}</p>\n${'lorem ipsum '.repeat(170)}\n`,
    );
  }
  writeFileSync(join(dir, 'index.html'), `<h1>${salt}</h1>\n`);
}

/** `slipway deploy` as a user runs it: its own process, to live. */
function deploy(
  dir: string,
  info: Info,
  configDir: string,
  prebuilt: boolean,
): Promise<{ ms: number; sent: number }> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const args = [BIN, 'deploy', dir, '--project', info.projectId, ...(prebuilt ? ['--prebuilt'] : [])];
    const child = spawn(process.execPath, args, {
      env: {
        ...process.env,
        SLIPWAY_API_URL: info.apiUrl,
        SLIPWAY_TOKEN: info.token,
        SLIPWAY_CONFIG_DIR: configDir,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      const sent = /: (\d+) files? to send/.exec(stderr);
      if (code !== 0 || !sent) fail(new Error(`slipway deploy exited ${code}: ${stderr}`));
      else done({ ms, sent: Number(sent[1]) });
    });
  });
}

/**
 * `slipway deploy` of a 1,000-file site, then again after one file changed: how many files the
 * second sends, and its time to live against the first one's, in the same run; as a source to
 * build (static: no build step) and with `--prebuilt` (stored as it is), in turns.
 */
export async function benchUpload(rounds = 3): Promise<string> {
  const { info, stop } = await spawnBenchServer<Info>('bench/stack-server.ts');
  const root = mkdtempSync(join(tmpdir(), 'slipway-bench-upload-'));
  try {
    const kinds = [false, true].map((prebuilt) => ({
      prebuilt,
      first: [] as number[],
      again: [] as number[],
      sentFirst: 0,
      sentAgain: [] as number[],
    }));
    for (let r = 0; r < rounds; r++) {
      for (const k of kinds) {
        const site = join(root, `site-${r}-${k.prebuilt}`);
        makeSite(site, `round ${r} ${k.prebuilt} ${Date.now()}`);
        const a = await deploy(site, info, root, k.prebuilt);
        k.first.push(a.ms);
        k.sentFirst = a.sent;
        writeFileSync(
          join(site, 'section-3', 'page-3.html'),
          `<p>changed in round ${r}${k.prebuilt ? ', prebuilt' : ''}</p>\n`,
        );
        const b = await deploy(site, info, root, k.prebuilt);
        k.again.push(b.ms);
        k.sentAgain.push(b.sent);
      }
    }
    const rows = kinds.flatMap((k) => {
      const how = k.prebuilt ? ' --prebuilt' : '';
      return [
        {
          case: `first deploy${how} (baseline)`,
          files_sent: k.sentFirst,
          median_ms: Math.round(median(k.first)),
        },
        {
          case: `redeploy${how}, one file changed`,
          files_sent: Math.max(...k.sentAgain),
          median_ms: Math.round(median(k.again)),
        },
      ];
    });
    const verdicts = kinds.map((k) => {
      const ratio = Math.round((median(k.again) / median(k.first)) * 100);
      return `Redeploy${k.prebuilt ? ' --prebuilt' : ''}: ${Math.max(...k.sentAgain)} file sent (target 1); ${ratio}% of the first deploy's time`;
    });
    return [
      `slipway deploy of a ${FILES + 1}-file static site (about 2 MB), to live (median of ${rounds})`,
      table(rows),
      ...verdicts,
    ].join('\n');
  } finally {
    await stop();
    rmSync(root, { recursive: true, force: true });
  }
}
