import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createArtifactStore } from '../../server/features/builds/artifacts.ts';
import type { BlobStore } from '../../server/platform/storage/blob-store.ts';
import { newId, randomString } from '../../server/core/ids.ts';
import type { Kysely } from 'kysely';
import type { Database, DeploymentsTable, ProjectsTable } from '../../server/platform/store/schema.ts';
import type { TestApp } from './app.ts';

/**
 * A folder of a server app's files (name -> source) that the sandbox's user can read, as a
 * supervisor test runs it; remove it with rmSync when done.
 */
export function appFolder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-app-'));
  chmodSync(dir, 0o755);
  for (const [name, source] of Object.entries(files)) writeFileSync(join(dir, name), source);
  return dir;
}

/** Stores `files` (site path -> content) as a real artifact under `root` (or in a blob store); returns its id. */
export async function storeSite(
  root: string | BlobStore,
  files: Record<string, string | Buffer>,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-site-'));
  // Server apps run as the sandbox's user, who must be able to read their files.
  chmodSync(dir, 0o755);
  try {
    for (const [path, content] of Object.entries(files)) {
      const abs = join(dir, path);
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, content);
    }
    const stored = await createArtifactStore(root).storeDirectory(dir, { maxBytes: 1e9, maxFiles: 10_000 });
    return stored.artifactId;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Stores one single-file site per name, each file `path` of `bytes` bytes with content of its
 * own (the name, then padding), written straight in the artifact store's on-disk format: fast
 * enough for thousands. Returns the artifact ids in order.
 */
export async function storeOwnSites(
  root: string,
  names: string[],
  path: string,
  bytes: number,
): Promise<string[]> {
  const createdAt = new Date().toISOString();
  const ids: string[] = [];
  mkdirSync(join(root, 'manifests'), { recursive: true });
  for (let i = 0; i < names.length; i += 100) {
    const batch = names.slice(i, i + 100).map(async (name) => {
      const content = Buffer.alloc(bytes, 'x');
      content.write(name);
      const hash = createHash('sha256').update(content).digest('hex');
      await mkdir(join(root, 'blobs', hash.slice(0, 2)), { recursive: true });
      await writeFile(join(root, 'blobs', hash.slice(0, 2), hash), content);
      const id = `art_${randomString(20)}`;
      const manifest = { id, createdAt, totalBytes: bytes, files: { [`/${path}`]: { hash, size: bytes } } };
      await writeFile(join(root, 'manifests', `${id}.json`), JSON.stringify(manifest));
      return id;
    });
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

/** An organization row (free plan, nobody's personal one), for inserts straight into the database. */
export function organizationRow(id = newId('org'), name = 'bench', now = new Date().toISOString()) {
  return {
    id,
    name,
    display_name: name,
    plan: 'free' as const,
    personal_user_id: null,
    created_at: now,
    updated_at: now,
  };
}

/** A project row (active, with a random name), for inserts straight into the database. */
export function projectRow(orgId: string, now: string, values: Partial<ProjectsTable> = {}): ProjectsTable {
  const name = values.name ?? `p-${randomString(8)}`;
  return {
    id: newId('prj'),
    organization_id: orgId,
    name,
    repository_url: 'https://example.com/repo.git',
    repository_credentials: null,
    branch: 'main',
    framework: null,
    detected_framework: null,
    install_command: null,
    build_command: null,
    output_directory: null,
    root_directory: null,
    status: 'active',
    production_host: name,
    production_deployment_id: null,
    protection: 'none',
    protection_bypass_hash: null,
    protection_bypass_created_at: null,
    created_at: now,
    updated_at: now,
    deleted_at: null,
    ...values,
  };
}

/** Inserts a project row straight into the database; returns it. */
export async function insertProject(
  t: TestApp,
  orgId: string,
  values: Partial<ProjectsTable> = {},
): Promise<ProjectsTable> {
  const row = projectRow(orgId, t.deps.clock.now().toISOString(), values);
  await t.deps.db.insertInto('projects').values(row).execute();
  return row;
}

/** A deployment row (live, production, with a random host), for inserts straight into the database. */
export function deploymentRow(
  projectId: string,
  now: string,
  values: Partial<DeploymentsTable> = {},
): DeploymentsTable {
  return {
    id: newId('dpl'),
    project_id: projectId,
    status: 'live',
    target: 'production',
    branch: 'main',
    commit_hash: null,
    commit_message: null,
    message: null,
    author: null,
    host: `d-${randomString(10)}`,
    build_duration_ms: null,
    deploy_duration_ms: null,
    error_message: null,
    rollback_from: null,
    source_deployment_id: null,
    artifact_id: null,
    runtime: null,
    created_by: null,
    created_at: now,
    updated_at: now,
    started_at: null,
    ready_at: null,
    promoted_at: null,
    source: 'git',
    build_spec: null,
    framework: null,
    branch_host: null,
    branch_seq: null,
    list_seq: null,
    ...values,
  };
}

/** Inserts a deployment row (live, production, with a random host) straight into the database. */
export async function insertDeployment(
  t: TestApp,
  projectId: string,
  values: Partial<DeploymentsTable> = {},
): Promise<DeploymentsTable> {
  const row = deploymentRow(projectId, t.deps.clock.now().toISOString(), values);
  await t.deps.db.insertInto('deployments').values(row).execute();
  return row;
}

/** Makes a deployment its project's production deployment, straight in the database. */
export async function setProduction(t: TestApp, projectId: string, deploymentId: string): Promise<void> {
  await t.deps.db
    .updateTable('projects')
    .set({ production_deployment_id: deploymentId })
    .where('id', '=', projectId)
    .execute();
}

/**
 * Inserts a project per name, each served in production by a live deployment of the static site
 * `artifactId` (one for all, or each name's own: `artifactId[i]`; hosts `<name>.<domain>`), in
 * batches; returns their rows in order.
 */
export async function insertLiveSites(
  db: Kysely<Database>,
  orgId: string,
  artifactId: string | string[],
  names: string[],
  now = new Date().toISOString(),
): Promise<{ project: ProjectsTable; deployment: DeploymentsTable }[]> {
  const sites = names.map((name, i) => {
    const project = projectRow(orgId, now, { name, framework: 'static' });
    const deployment = deploymentRow(project.id, now, {
      host: `${name}-live`,
      artifact_id: typeof artifactId === 'string' ? artifactId : artifactId[i]!,
      runtime: JSON.stringify({ kind: 'static', spa: false }),
      started_at: now,
      ready_at: now,
    });
    project.production_deployment_id = deployment.id;
    return { project, deployment };
  });
  for (let i = 0; i < sites.length; i += 500) {
    const batch = sites.slice(i, i + 500);
    await db
      .insertInto('projects')
      .values(batch.map((s) => s.project))
      .execute();
    await db
      .insertInto('deployments')
      .values(batch.map((s) => s.deployment))
      .execute();
  }
  return sites;
}

/** Listens on 127.0.0.1 on a free port; returns the port. */
export function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

export interface EdgeAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
}

/** One HTTP/1.1 request to 127.0.0.1:port with this Host header; `path` is sent exactly as given. */
export function edgeRequest(
  port: number,
  host: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<EdgeAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? 'GET',
        headers: { host, ...opts.headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text: body.toString('utf8') });
        });
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** The status an upgrade (WebSocket) request to 127.0.0.1:port with this Host header gets; a switch is 101. */
export function upgradeStatus(
  port: number,
  host: string,
  headers: Record<string, string> = {},
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      headers: { host, connection: 'Upgrade', upgrade: 'websocket', ...headers },
      agent: false,
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode!);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end();
  });
}
