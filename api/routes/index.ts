import { billing } from './billing.ts';
import { certificates } from './certificates.ts';
import type { RouteContract } from './contract.ts';
import { deployHooks } from './deploy-hooks.ts';
import { deployments } from './deployments.ts';
import { domains } from './domains.ts';
import { env } from './env.ts';
import { githubEvents } from './github-events.ts';
import { monitoring } from './monitoring.ts';
import { organizations } from './organizations.ts';
import { projects } from './projects.ts';
import { protection } from './protection.ts';
import { system } from './system.ts';
import { trust } from './trust.ts';
import { uploads } from './uploads.ts';
import { user } from './user.ts';
import { versioned } from './versioned.ts';
import { webhooks } from './webhooks.ts';

export {
  billing,
  certificates,
  deployHooks,
  deployments,
  domains,
  env,
  githubEvents,
  monitoring,
  organizations,
  projects,
  protection,
  system,
  trust,
  uploads,
  user,
  versioned,
  webhooks,
};
export { contract, pathOf, seg, type Method, type PathParams, type RouteContract } from './contract.ts';

/**
 * Every route's contract, by area (one file each; an entry's `tag` is its OpenAPI section): the
 * server serves each entry once (server/routes), the client calls them (api/client).
 */
export const contracts = {
  system,
  user,
  organizations,
  projects,
  deployments,
  deployHooks,
  protection,
  uploads,
  domains,
  certificates,
  env,
  monitoring,
  webhooks,
  billing,
  githubEvents,
  trust,
  versioned,
} satisfies Record<string, Record<string, RouteContract>>;

/** Every entry of every area, in one list. */
export const allContracts = (): RouteContract[] =>
  Object.values(contracts).flatMap((area): RouteContract[] => Object.values<RouteContract>(area));
