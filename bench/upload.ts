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
function deploy(dir: string, info: Info, configDir: string): Promise<{ ms: number; sent: number }> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [BIN, 'deploy', dir, '--project', info.projectId], {
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
 * second sends, and its time to live against the first one's, in the same run.
 */
export async function benchUpload(rounds = 3): Promise<string> {
  const { info, stop } = await spawnBenchServer<Info>('bench/stack-server.ts');
  const root = mkdtempSync(join(tmpdir(), 'slipway-bench-upload-'));
  try {
    const first: number[] = [];
    const again: number[] = [];
    const sentAgain: number[] = [];
    let sentFirst = 0;
    for (let r = 0; r < rounds; r++) {
      const site = join(root, `site-${r}`);
      makeSite(site, `round ${r} ${Date.now()}`);
      const a = await deploy(site, info, root);
      first.push(a.ms);
      sentFirst = a.sent;
      writeFileSync(join(site, 'section-3', 'page-3.html'), `<p>changed in round ${r}</p>\n`);
      const b = await deploy(site, info, root);
      again.push(b.ms);
      sentAgain.push(b.sent);
    }
    const f = median(first);
    const g = median(again);
    return [
      `slipway deploy of a ${FILES + 1}-file static site (about 2 MB), to live (median of ${rounds})`,
      table([
        { case: 'first deploy (baseline)', files_sent: sentFirst, median_ms: Math.round(f) },
        { case: 'redeploy, one file changed', files_sent: Math.max(...sentAgain), median_ms: Math.round(g) },
      ]),
      `Redeploy: ${Math.max(...sentAgain)} file sent (target 1); ${Math.round((g / f) * 100)}% of the first deploy's time`,
    ].join('\n');
  } finally {
    await stop();
    rmSync(root, { recursive: true, force: true });
  }
}
