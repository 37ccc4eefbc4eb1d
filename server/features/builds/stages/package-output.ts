import { readdir } from 'node:fs/promises';
import { relative } from 'node:path';
import type { ArtifactStore, StoreLimits } from '../artifacts.ts';
import { BuildError } from '../../../platform/sandbox/build-error.ts';
import type { BuildSettings } from '../../../platform/store/build-spec.ts';
import type { AppKind, DetectedFramework } from '../detect-framework.ts';
import { describeBytes } from '../../../core/format.ts';
import type { AppAt, FrameworkOutput } from '../outputs/index.ts';
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

/**
 * The last stage: stores what the build made. The project's output directory, when set, is a
 * static site whatever the framework; else a framework's server when its build made one (with
 * the static assets the edge serves in front of it); else a Node.js app's whole folder; else
 * the framework's static output folder.
 */
export async function packageOutput(p: PackageInput): Promise<PackagedOutput> {
  const { fw, settings, at } = p;
  const skipped: string[] = [];
  const limits = {
    ...p.limits,
    onSkip: (path: string, reason: string) => skipped.push(`${path} (${reason})`),
  };
  const sayStored = (stored: { fileCount: number; totalBytes: number }) =>
    p.info(
      `Stored ${stored.fileCount} ${stored.fileCount === 1 ? 'file' : 'files'} (${describeBytes(stored.totalBytes)})`,
    );
  const saySkipped = () => {
    if (skipped.length === 0) return;
    const some = skipped.slice(0, 5).join(', ') + (skipped.length > 5 ? ', ...' : '');
    p.info(`Left out ${skipped.length} files that cannot be published (links are never followed): ${some}`);
    skipped.length = 0;
  };

  /** The `_redirects` and `_headers` of the folder the site's root is served from, in the log. */
  const sayRules = async (dir: string) => {
    for (const line of await describeRoutingRules(dir)) p.info(line);
  };

  const server = settings.outputDirectory === null && p.output ? await p.output.server(at) : null;
  if (server) {
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
    saySkipped();
    sayStored(stored);
    let assetsArtifactId: string | undefined;
    if (server.assets.length > 0) {
      const where = server.assets.map((a) => `${relative(at.src, a.dir)} at ${a.prefix}`).join(', ');
      p.info(p.phase(`Storing static assets the edge serves itself: ${where}`));
      const assets = await p.artifacts.storeTrees(server.assets, limits);
      saySkipped();
      sayStored(assets);
      assetsArtifactId = assets.artifactId;
      const atRoot = server.assets.find((a) => a.prefix === '/');
      if (atRoot) await sayRules(atRoot.dir);
    }
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

  if (fw.kind === 'node') {
    // A server app keeps the whole checkout: a monorepo's app needs the root's node_modules and
    // its workspace links (kept when they stay inside).
    p.info(p.phase('Storing the app'));
    const stored = await p.artifacts.storeDirectory(at.src, {
      ...limits,
      keepLinks: true,
      exclude: ['.git'],
    });
    saySkipped();
    sayStored(stored);
    await sayRules(at.src);
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
    ...limits,
    // A static site served from the root must not publish its history or its dependencies.
    exclude: atRoot ? ['.git', 'node_modules'] : [],
  });
  saySkipped();
  sayStored(stored);
  await sayRules(output);
  return {
    kind: 'static',
    artifactId: stored.artifactId,
    spa: fw.spa,
    fileCount: stored.fileCount,
    totalBytes: stored.totalBytes,
  };
}
