import { readdir } from 'node:fs/promises';
import { relative } from 'node:path';
import type { ArtifactStore, StoreLimits } from '../artifacts.ts';
import { BuildError } from '../../../platform/sandbox/build-error.ts';
import type { BuildSettings } from '../../../platform/store/build-spec.ts';
import type { AppKind, DetectedFramework } from '../detect-framework.ts';
import { describeBytes } from '../../../core/format.ts';
import type { AppAt, FrameworkOutput, ServerOutput } from '../outputs/index.ts';
import { describeRoutingRules } from '../../../platform/routing/describe-routing-rules.ts';
import { builtFolder, findOutput, folderInside } from './folders.ts';

/** What a build stored, and how the edge serves it (deployments.runtime). */
export interface PackagedOutput {
  kind: AppKind;
  /** `static`: the site's files; `node`: the server's files (never served as files). */
  artifactId: string;
  /** Unknown paths answer `/index.html`. */
  spa: boolean;
  /** `node`: shell command that starts it in the artifact's root. */
  startCommand?: string;
  /** `node`: files the edge answers itself before the server (static assets). */
  assetsArtifactId?: string;
  /** `node`: folders of the server's own it writes at run time. */
  writable?: string[];
  /** `node`: variables the server needs behind the edge. */
  env?: Record<string, string>;
  fileCount: number;
  totalBytes: number;
}

export interface PackageInput {
  fw: DetectedFramework;
  settings: BuildSettings;
  at: AppAt;
  output: FrameworkOutput | null;
  artifacts: ArtifactStore;
  limits: Pick<StoreLimits, 'maxBytes' | 'maxFiles'>;
  info: (line: string) => void;
  phase: (title: string) => string;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** What every way of packaging shares: the limits, and what it says in the log. */
interface Packaging {
  p: PackageInput;
  limits: Pick<StoreLimits, 'maxBytes' | 'maxFiles'> & { onSkip: (path: string, reason: string) => void };
  /** Files left out of the last store, said (and emptied) by saySkipped. */
  skipped: string[];
}

function sayStored(k: Packaging, stored: { fileCount: number; totalBytes: number }): void {
  k.p.info(
    `Stored ${stored.fileCount} ${stored.fileCount === 1 ? 'file' : 'files'} (${describeBytes(stored.totalBytes)})`,
  );
}

function saySkipped(k: Packaging): void {
  const { skipped } = k;
  if (skipped.length === 0) return;
  const some = skipped.slice(0, 5).join(', ') + (skipped.length > 5 ? ', ...' : '');
  k.p.info(`Left out ${skipped.length} files that cannot be published (links are never followed): ${some}`);
  skipped.length = 0;
}

/** The `_redirects` and `_headers` of the folder the site's root is served from, in the log. */
async function sayRules(k: Packaging, dir: string): Promise<void> {
  for (const line of await describeRoutingRules(dir)) k.p.info(line);
}

/**
 * The last stage: stores what the build made. The project's output directory, when set, is a
 * static site whatever the framework; else a framework's server when its build made one (with
 * the static assets the edge serves in front of it); else a Node.js app's whole folder; else
 * the framework's static output folder.
 */
export async function packageOutput(p: PackageInput): Promise<PackagedOutput> {
  const skipped: string[] = [];
  const k: Packaging = {
    p,
    skipped,
    limits: {
      ...p.limits,
      onSkip: (path: string, reason: string) => skipped.push(`${path} (${reason})`),
    },
  };
  const server = p.settings.outputDirectory === null && p.output ? await p.output.server(p.at) : null;
  if (server) return packageServer(k, server);
  if (p.fw.kind === 'node') return packageNodeApp(k);
  return packageStatic(k);
}

/** A framework's server, and the static assets the edge serves in front of it. */
async function packageServer(k: Packaging, server: ServerOutput): Promise<PackagedOutput> {
  const { p, limits } = k;
  const { at } = p;
  if (!(await builtFolder(at.src, server.root, server.description))) {
    throw new BuildError(`The build did not create the ${server.description}'s folder.`);
  }
  const assets = [];
  for (const a of server.assets) {
    if (await builtFolder(at.src, a.dir, server.description)) assets.push(a);
  }
  server.assets = assets;
  p.info(p.phase(`Storing the ${server.description} from ${relative(at.src, server.root) || '.'}`));
  const stored = await p.artifacts.storeDirectory(server.root, {
    ...limits,
    keepLinks: true,
    exclude: ['.git'],
  });
  saySkipped(k);
  sayStored(k, stored);
  const assetsArtifactId = server.assets.length > 0 ? await packageAssets(k, server) : undefined;
  return {
    kind: 'node',
    artifactId: stored.artifactId,
    spa: false,
    startCommand: server.startCommand,
    ...(assetsArtifactId ? { assetsArtifactId } : {}),
    ...(server.writable.length ? { writable: server.writable } : {}),
    ...(Object.keys(server.env).length ? { env: server.env } : {}),
    fileCount: stored.fileCount,
    totalBytes: stored.totalBytes,
  };
}

/** The static assets of a server the edge serves itself; answers their artifact's id. */
async function packageAssets(k: Packaging, server: ServerOutput): Promise<string> {
  const { p } = k;
  const where = server.assets.map((a) => `${relative(p.at.src, a.dir)} at ${a.prefix}`).join(', ');
  p.info(p.phase(`Storing static assets the edge serves itself: ${where}`));
  const assets = await p.artifacts.storeTrees(server.assets, k.limits);
  saySkipped(k);
  sayStored(k, assets);
  const atRoot = server.assets.find((a) => a.prefix === '/');
  if (atRoot) await sayRules(k, atRoot.dir);
  return assets.artifactId;
}

/**
 * A server app keeps the whole checkout: a monorepo's app needs the root's node_modules and its
 * workspace links (kept when they stay inside).
 */
async function packageNodeApp(k: Packaging): Promise<PackagedOutput> {
  const { p } = k;
  const { at, fw } = p;
  p.info(p.phase('Storing the app'));
  const stored = await p.artifacts.storeDirectory(at.src, {
    ...k.limits,
    keepLinks: true,
    exclude: ['.git'],
  });
  saySkipped(k);
  sayStored(k, stored);
  await sayRules(k, at.src);
  const appPath = relative(at.src, at.app);
  return {
    kind: 'node',
    artifactId: stored.artifactId,
    spa: false,
    startCommand: appPath ? `cd ${shellQuote(appPath)} && ${fw.startCommand!}` : fw.startCommand!,
    fileCount: stored.fileCount,
    totalBytes: stored.totalBytes,
  };
}

/** The project's output directory, or the framework's static output folder. */
async function packageStatic(k: Packaging): Promise<PackagedOutput> {
  const { p } = k;
  const { at, fw, settings } = p;
  const output =
    settings.outputDirectory !== null
      ? await folderInside(at.app, settings.outputDirectory, 'output directory', at.src)
      : await findOutput(at.app, fw);
  const outputName = relative(at.src, output) || '.';
  p.info(p.phase(`Storing build output from ${outputName}`));
  if ((await readdir(output)).length === 0)
    throw new BuildError(`The output directory ${outputName} is empty.`);
  const atRoot = output === at.src || output === at.app;
  const stored = await p.artifacts.storeDirectory(output, {
    ...k.limits,
    // A static site served from the root must not publish its history or its dependencies.
    exclude: atRoot ? ['.git', 'node_modules'] : [],
  });
  saySkipped(k);
  sayStored(k, stored);
  await sayRules(k, output);
  return {
    kind: 'static',
    artifactId: stored.artifactId,
    spa: fw.spa,
    fileCount: stored.fileCount,
    totalBytes: stored.totalBytes,
  };
}
