import type { Kysely } from 'kysely';
import type { Database } from '../../../../platform/store/schema.ts';
import { deploymentQuery, labelRows, type LabelRow } from './label-rows.ts';
import { guardOf, guarded, protectionOf, type Resolution } from './resolution.ts';
import { notServing, toTarget, type ProjectCols } from './to-target.ts';

/** What a look-up reads: the database, and the service domains a label is left of. */
export interface LookupDeps {
  db: Kysely<Database>;
  /** The service domain, and the public edge URL's host when one is set. */
  suffixes: readonly string[];
}

/**
 * A protected host's answer with its project's share links and its organization's members (two
 * more queries, for protected hosts only, once per cached look-up). Every link the project has,
 * expired ones too: a link's cookies end with it anyway.
 */
export async function lookup(deps: LookupDeps, host: string): Promise<Resolution> {
  const { db } = deps;
  const r = await lookupHost(deps, host);
  const guard = guardOf(r);
  if (!guard?.protection) return r;
  const [rows, memberRows] = await Promise.all([
    db.selectFrom('protection_links').select('id').where('project_id', '=', guard.projectId).execute(),
    db
      .selectFrom('memberships as m')
      .innerJoin('projects as p', 'p.organization_id', 'm.organization_id')
      .select('m.user_id')
      .where('p.id', '=', guard.projectId)
      .where('m.user_id', 'is not', null)
      .execute(),
  ]);
  // The sets protectionOf made for this answer, not shared with any other yet.
  const links = guard.protection.links as Set<string>;
  for (const { id } of rows) links.add(id);
  const members = guard.protection.members as Set<string>;
  for (const { user_id } of memberRows) members.add(user_id!);
  return r;
}

/** A host's answer: a label of a service domain (`fromLabel`), else a verified custom domain. */
async function lookupHost(deps: LookupDeps, host: string): Promise<Resolution> {
  const { db } = deps;
  const label = labelOf(deps.suffixes, host);
  if (label) {
    const answer = fromLabel(await labelRows(db, label));
    if (answer) return answer;
  }
  const domain = await db
    .selectFrom('domains')
    .innerJoin('projects', 'projects.id', 'domains.project_id')
    .select([
      'projects.id',
      'projects.status',
      'projects.framework',
      'projects.production_deployment_id',
      'projects.deleted_at',
      'projects.protection',
      'projects.protection_bypass_hash',
    ])
    .where('domains.domain', '=', host)
    .where('domains.status', '=', 'verified')
    .executeTakeFirst();
  return domain ? production(db, domain) : { kind: 'unknown' };
}

/** The single label left of a service domain, or null: `web.localhost` -> `web`. */
function labelOf(suffixes: readonly string[], host: string): string | null {
  for (const suffix of suffixes) {
    if (!host.endsWith(`.${suffix}`)) continue;
    const label = host.slice(0, -(suffix.length + 1));
    if (label && !label.includes('.')) return label;
  }
  return null;
}

/**
 * The answer of a label's rows (`labelRows`): a deployment's own URL, else a production URL, else
 * a branch URL; undefined when the label is none of them.
 */
function fromLabel(rows: LabelRow[]): Resolution | undefined {
  const own = rows.find((r) => Number(r.via) === 0);
  if (own?.id && own.status && own.target) {
    const d = { ...own, id: own.id, status: own.status, target: own.target };
    if (d.deleted_at !== null || d.project_status === 'deleted') return { kind: 'unknown' };
    const protection = protectionOf(d, 'preview');
    const g = guarded(protection);
    if (d.project_status === 'suspended') return { kind: 'suspended', projectId: d.project_id, ...g };
    // `deploying` is served too: the builder's health check reaches the deployment by its URL.
    if (d.status === 'live' || d.status === 'deploying') return toTarget(d, d.framework, protection);
    return { kind: 'not-ready', projectId: d.project_id, deploymentId: d.id, status: d.status, ...g };
  }
  const p = rows.find((r) => Number(r.via) === 1);
  if (p) {
    const early = notServing({ ...p, id: p.project_id, status: p.project_status });
    if (early) return early;
    const protection = protectionOf(p, 'production');
    if (!p.id || !p.target) return { kind: 'no-production', projectId: p.project_id, ...guarded(protection) };
    return toTarget({ ...p, id: p.id, target: p.target }, p.framework, protection);
  }
  // A branch URL: the newest live preview of its branch, served like the deployment's own URL.
  const b = rows.find((r) => Number(r.via) === 2);
  if (b) {
    if (b.deleted_at !== null || b.project_status === 'deleted') return { kind: 'unknown' };
    const protection = protectionOf(b, 'preview');
    const g = guarded(protection);
    if (b.project_status === 'suspended') return { kind: 'suspended', projectId: b.project_id, ...g };
    if (!b.id || !b.target) return { kind: 'no-branch-deployment', projectId: b.project_id, ...g };
    return toTarget({ ...b, id: b.id, target: b.target }, b.framework, protection);
  }
  return undefined;
}

/** A project's production: its current production deployment, whatever its URL. */
async function production(db: Kysely<Database>, p: ProjectCols): Promise<Resolution> {
  const early = notServing(p);
  if (early) return early;
  const d = p.production_deployment_id
    ? await deploymentQuery(db).where('d.id', '=', p.production_deployment_id).executeTakeFirst()
    : undefined;
  const protection = protectionOf(p, 'production');
  if (!d) return { kind: 'no-production', projectId: p.id, ...guarded(protection) };
  return toTarget(d, p.framework, protection);
}
