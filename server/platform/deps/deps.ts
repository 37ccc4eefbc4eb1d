import type { ProjectWithRole } from './project-with-role.ts';
import type { RateCounts } from './rate-counts/rate-counts.ts';
import type { TokenCache } from './token-cache.ts';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Clock } from '../../core/clock.ts';
import type { Cipher } from '../../core/secrets.ts';
import type { Dns } from '../../core/dns.ts';
import type { Store } from '../store/db.ts';
import type { Database } from '../store/schema.ts';
import type { JobQueue } from '../queue/queue.ts';
import type { MetricsCache } from './metrics-cache.ts';
import type { OidcKeys } from './oidc-keys.ts';
import type { OpsMetrics } from '../ops-metrics/ops-metrics.ts';
import type { Urls } from './urls.ts';

/** Everything a service needs from the outside world, injected. */
export interface Deps {
  store: Store;
  db: Kysely<Database>;
  config: Config;
  clock: Clock;
  cipher: Cipher;
  log: Logger;
  queue: JobQueue;
  urls: Urls;
  dns: Dns;
  /** Recent token lookups, dropped on revocation. */
  tokens: TokenCache;
  /** Recent metrics answers, dropped when this process writes the rollups. */
  metrics: MetricsCache;
  /** The signing keys of the OIDC issuer `config.oidc` names, fetched when needed. */
  oidcKeys: OidcKeys;
  /** The key payment challenges are signed with, loaded on first use (server/features/billing/secret.ts). */
  paymentKey: () => Buffer;
  /**
   * The key preview protection's cookies are signed with (features/serving/protection/protection-cookie.ts):
   * derived from the encryption key, so every process of one service agrees on it.
   */
  protectionKey: Uint8Array;
  /**
   * Where this process counts requests against the hourly rate limits (server/platform/deps/rate-counts/rate-counts.ts):
   * in memory and written behind on SQLite, in batches in the database on PostgreSQL.
   */
  rateCounts: RateCounts;
  /** The operator's Prometheus metrics of this process (server/platform/ops-metrics/); its own registry. */
  ops: OpsMetrics;
}

/** Who is calling: resolved from the bearer token. */
export interface Actor {
  userId: string;
  email: string;
  tokenId: string;
  /** A token from a GitHub Actions trust policy: this one project, at most this role (server/platform/http/scope.ts). */
  scope?: { projectId: string; role: 'viewer' | 'developer' } | undefined;
  /** The GitHub App's own token (`slipway token create --github-app`): may use the App's event queue. */
  githubApp?: true | undefined;
  /**
   * The project named in the request's path with this caller's role, read together with the
   * rate-limit count (PostgreSQL: one round trip; SQLite: one turn's shared work); the request's
   * first `requireProject` of that project takes it (server/features/identity/access.ts).
   */
  preloadedProject?: { projectId: string; row: ProjectWithRole | null } | undefined;
}
