import type { Generated } from 'kysely';
import type { LatencyColumn } from '../../core/histogram.ts';

/**
 * Column conventions, so that SQLite and PostgreSQL behave the same:
 * timestamps are ISO 8601 strings (they sort as text), booleans are 0/1 integers,
 * structured values are JSON text, money is integer cents.
 */
export interface UsersTable {
  id: string;
  email: string;
  created_at: string;
}

export interface TokensTable {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /**
   * `user` (made by a person), `oidc` (exchanged for a workflow's OIDC token: never listed) or
   * `github_app` (made by the operator for the GitHub App: the only kind that may use the App's
   * event queue, docs/bot.md#durable-events).
   */
  source: Generated<'user' | 'oidc' | 'github_app'>;
  /** An `oidc` token's one project, role and end. */
  project_id: string | null;
  scope_role: 'viewer' | 'developer' | null;
  expires_at: string | null;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  display_name: string;
  plan: 'free' | 'pro' | 'enterprise';
  /** Set on a user's personal organization. */
  personal_user_id: string | null;
  created_at: string;
  updated_at: string;
  /**
   * Sum of the sizes of its rows in `uploaded_files`, kept with them in one transaction
   * (features/uploads/upload-quota.ts). A string on PostgreSQL (bigint): read it with Number().
   */
  upload_bytes: Generated<number | string>;
}

export interface MembershipsTable {
  id: string;
  organization_id: string;
  email: string;
  user_id: string | null;
  role: 'owner' | 'admin' | 'developer' | 'viewer';
  invited_at: string;
  joined_at: string | null;
}

export interface ProjectsTable {
  id: string;
  organization_id: string;
  name: string;
  /** Without credentials: those are in `repository_credentials` (server/features/github/repository-credentials.ts). */
  repository_url: string;
  /** The URL's `user:token` part, AES-256-GCM ciphertext (server/core/secrets.ts), or null. */
  repository_credentials: string | null;
  branch: string;
  /** The user's setting; null: detect on every build. */
  framework: string | null;
  /** What the newest build detected (migration 028); `framework` is the user's setting. */
  detected_framework: string | null;
  /** Build settings; null: detect. An empty command skips that step. */
  install_command: string | null;
  build_command: string | null;
  /** Relative to `root_directory`. */
  output_directory: string | null;
  /** The app's folder inside the repository. */
  root_directory: string | null;
  status: 'active' | 'suspended' | 'deleted';
  /** Host label of the production URL, unique among projects that are not deleted. */
  production_host: string;
  production_deployment_id: string | null;
  /** Who may see its hosts without signing in (docs/protection.md); existing projects read `none`. */
  protection: 'none' | 'previews' | 'all';
  /** SHA-256 (hex) of the protection bypass secret, shown once when it was made; null: none. */
  protection_bypass_hash: string | null;
  protection_bypass_created_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface DeploymentsTable {
  id: string;
  project_id: string;
  status: 'queued' | 'building' | 'deploying' | 'live' | 'failed';
  target: 'production' | 'preview';
  branch: string;
  commit_hash: string | null;
  commit_message: string | null;
  message: string | null;
  author: string | null;
  /** Host label of the deployment's own URL. */
  host: string;
  build_duration_ms: number | null;
  deploy_duration_ms: number | null;
  error_message: string | null;
  rollback_from: string | null;
  /** The deployment whose build this one reuses (rollback). */
  source_deployment_id: string | null;
  artifact_id: string | null;
  /** JSON `{ kind: 'static' | 'node', spa, startCommand? }` once built (server/features/serving/edge reads it). */
  runtime: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  ready_at: string | null;
  promoted_at: string | null;
  /** `git` (cloned), `upload` (uploaded files, built) or `prebuilt` (uploaded files, served as they are). */
  source: 'git' | 'upload' | 'prebuilt';
  /** The framework slug it was built as, once built. */
  framework: string | null;
  /** JSON BuildSpec (server/platform/store/build-spec.ts), decided when queued; null for a rollback (it reuses a build). */
  build_spec: string | null;
  /** A preview's branch URL label (`branch_aliases.host`), set when queued; null for production. */
  branch_host: string | null;
  /** A preview's place among its branch's previews, in the order they were queued (1, 2, ...). */
  branch_seq: number | null;
  /**
   * Its place in its project's list counted from the oldest (1..n, no gaps, in (created_at, id)
   * order), kept by a trigger (migration 026): page N of the list starts at `total - (N-1) * limit`.
   */
  list_seq: number | null;
}

/**
 * Deployments of a project per combination of the list's equality filters, `''` for "any"
 * (migration 026): kept by triggers in the same transaction as the deployments.
 */
export interface DeploymentCountsTable {
  project_id: string;
  status: string;
  target: string;
  branch: string;
  n: number;
}

/** Projects of an organization per status (migration 026), kept by triggers. */
export interface ProjectCountsTable {
  organization_id: string;
  status: string;
  n: number;
}

/**
 * A branch's stable URL (docs/edge.md#branch-urls): `host` serves `deployment_id`, the newest
 * preview of the branch that went live (null until one has).
 */
export interface BranchAliasesTable {
  project_id: string;
  branch: string;
  /** Host label, unique across aliases and kept clear of production and deployment hosts. */
  host: string;
  deployment_id: string | null;
  /** `deployments.branch_seq` of `deployment_id`: the alias only moves to a higher one. */
  deployment_seq: number | null;
  /** How many previews of the branch were queued: the last `branch_seq` given. */
  previews: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface UploadedFilesTable {
  organization_id: string;
  sha256: string;
  size: number;
  last_used_at: string;
}

export interface DeploymentLogsTable {
  id: Generated<number>;
  deployment_id: string;
  type: 'build' | 'runtime' | 'error';
  at: string;
  line: string;
}

export interface JobsTable {
  id: string;
  kind: string;
  payload: string;
  status: 'queued' | 'running' | 'done' | 'failed';
  run_at: string;
  attempts: number;
  max_attempts: number;
  lease_until: string | null;
  locked_by: string | null;
  last_error: string | null;
  /** Whose job it is, for fair claims (builds: the organization's id); null for other kinds. */
  fair_key: string | null;
  /** When it was last claimed: owners served longest ago go first (platform/queue/fair-claim.ts). */
  claimed_at: string | null;
  /** One open job per key runs at a time, the lowest `seq` first; null: no order of its own. */
  ordering_key: string | null;
  /**
   * The order within `ordering_key`, set on insert for keyed jobs only (a string on PostgreSQL,
   * where it is a bigint): compared in SQL, never in code.
   */
  seq: number | string | null;
  /** Whose token may claim and finish it through the API (the GitHub App's events). */
  owner_user_id: string | null;
  /** A job with the key of one kept already is not stored again (unique where set). */
  dedupe_key: string | null;
  /** What the job is about, for listings by it (webhook deliveries: the webhook's id). */
  subject: string | null;
  created_at: string;
  updated_at: string;
}

export interface DomainsTable {
  id: string;
  project_id: string;
  domain: string;
  status: 'pending' | 'verified';
  ssl_status: 'pending' | 'active' | 'failed';
  ssl_error: string | null;
  verification_token: string;
  verified_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface EnvVarsTable {
  id: string;
  project_id: string;
  key: string;
  environment: 'production' | 'preview' | 'development';
  /** AES-256-GCM ciphertext, see server/core/secrets.ts. */
  value_ciphertext: string;
  encrypted: number;
  created_at: string;
  updated_at: string;
}

export interface WebhooksTable {
  id: string;
  project_id: string;
  url: string;
  events: string;
  secret_ciphertext: string;
  active: number;
  created_at: string;
  updated_at: string;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: string;
  at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

/** Requests of one user (all their tokens) in one hourly window. */
export interface RateLimitsTable {
  user_id: string;
  window_start: number;
  count: number;
  /** How many requests the last PostgreSQL batch counted (server/platform/deps/rate-counts/rate-counts-batched.ts). */
  granted: Generated<number>;
}

export interface AlertsTable {
  id: string;
  project_id: string;
  type: 'high_error_rate' | 'deployment_failed' | 'health_check_failed';
  status: 'active' | 'resolved';
  message: string;
  created_at: string;
  resolved_at: string | null;
}

export interface HealthChecksTable {
  id: Generated<number>;
  project_id: string;
  at: string;
  ok: number;
  status_code: number | null;
  response_time_ms: number | null;
  error: string | null;
}

/** The resolutions traffic and runtime are rolled up at; each row covers one whole minute, hour or day (UTC). */
export type RollupSpan = 'minute' | 'hour' | 'day';

/**
 * Traffic of one project over one minute, hour or day (server/features/monitoring/record-requests.ts).
 * Every column is a count or a sum, so a longer stretch is the sum of its rows; the latency
 * histogram is one column per bucket (`lat_0` to `lat_24`, server/core/histogram.ts).
 */
export interface TrafficRollupsTable extends Record<LatencyColumn, number> {
  project_id: string;
  span: RollupSpan;
  /** Start of the minute, hour or day, ISO. */
  bucket_start: string;
  requests: number;
  success: number;
  errors: number;
  /** Answers with a 5xx status (the `high_error_rate` rule). */
  server_errors: number;
  bytes: number;
  latency_sum_ms: number;
}

/** Answers with one status of 400 or more, per project and minute, hour or day. */
export interface TrafficStatusCountsTable {
  project_id: string;
  span: RollupSpan;
  bucket_start: string;
  status: number;
  count: number;
}

/** CPU and memory samples of a project's server processes per hour or day (minutes: `runtime_samples`). */
export interface RuntimeRollupsTable {
  project_id: string;
  span: Exclude<RollupSpan, 'minute'>;
  bucket_start: string;
  samples: number;
  cpu_sum: number;
  cpu_max: number;
  ram_sum: number;
  ram_max: number;
}

/** Append-only prepaid ledger: top-ups (positive) and charges (negative); a balance is a sum. */
export interface LedgerEntriesTable {
  /** `chg_` for charges, `top_` for top-ups. */
  id: string;
  organization_id: string;
  /** Signed integer cents: positive for a top-up, negative for a charge. */
  amount_cents: number;
  kind: 'topup' | 'charge';
  /** Payment method of a charge (`ledger`). */
  method: string | null;
  /** The resource a charge paid for (`prj_...`, `dpl_...`), or a top-up's note. */
  reference: string | null;
  /** The paid operation, e.g. `POST /api/v1/projects`. */
  operation: string | null;
  /** The payment challenge a charge settled; unique, so a credential pays once. */
  challenge_id: string | null;
  /** Who paid (charges) or null (top-ups from the CLI). */
  user_id: string | null;
  created_at: string;
}

/** One Idempotency-Key of one user: claimed while the first request runs, then its stored answer. */
export interface IdempotencyKeysTable {
  user_id: string;
  key: string;
  method: string;
  /** Path and query string of the first request. */
  path: string;
  /** SHA-256 of the first request's body in canonical JSON. */
  body_hash: string;
  state: 'in-progress' | 'done';
  status: number | null;
  /** The answer's body, AES-256-GCM ciphertext (it may hold a secret, such as a new API token). */
  response_body: string | null;
  /** JSON object of the response headers a replay repeats. */
  response_headers: string | null;
  created_at: string;
  expires_at: string;
}

/** The current certificate of a custom domain (one per domain; a renewal replaces it). */
export interface CertificatesTable {
  domain_id: string;
  /** The host name, as the TLS listener looks it up by SNI. */
  domain: string;
  /** The leaf certificate followed by its chain, PEM. */
  cert_pem: string;
  /** The private key (PEM), encrypted with server/core/secrets.ts. */
  key_ciphertext: string;
  /** The issuer's common name (`Pebble Intermediate CA ...`, `Slipway self-signed`). */
  issuer: string;
  /** 1 when issued locally without a certificate authority. */
  self_signed: number;
  not_before: string;
  not_after: string;
  created_at: string;
  updated_at: string;
}

/** The ACME account of one directory; its key is created once and kept. */
export interface AcmeAccountsTable {
  directory_url: string;
  /** The account's private key (PEM), encrypted. */
  key_ciphertext: string;
  account_url: string | null;
  email: string | null;
  created_at: string;
}

/** An HTTP-01 challenge in progress: any edge answers `/.well-known/acme-challenge/<token>` from it. */
export interface AcmeChallengesTable {
  token: string;
  key_authorization: string;
  domain: string;
  created_at: string;
  expires_at: string;
}

/** CPU and memory of one deployment's server process(es), summed per minute. */
export interface RuntimeSamplesTable {
  project_id: string;
  /** Start of the minute, ISO. */
  minute: string;
  deployment_id: string;
  /** Samples taken in the minute. */
  samples: number;
  /** Sum of the samples' CPU use, in hundredths of a percent of one core. */
  cpu_sum: number;
  /** Highest sample, in hundredths of a percent. */
  cpu_max: number;
  /** Sum of the samples' resident memory, bytes. */
  ram_sum: number;
  /** Highest sample, bytes. */
  ram_max: number;
}

/** A dashboard sign-in (server/features/identity/sessions/dashboard-session.ts). */
export interface SessionsTable {
  /** SHA-256 of the cookie's value. */
  id_hash: string;
  user_id: string;
  /** The API token signed in with; its revocation ends the session. */
  token_id: string | null;
  csrf: string;
  created_at: string;
  expires_at: string;
}

/** Which GitHub Actions workflows may deploy a project without a stored token. */
export interface TrustPoliciesTable {
  id: string;
  project_id: string;
  /** `owner/name`, lower case. */
  repository: string;
  /** GitHub's numeric repository id, as text. */
  repository_id: string;
  /** JSON arrays, or null for any. */
  refs: string | null;
  environments: string | null;
  workflow: string | null;
  events: string | null;
  role: 'viewer' | 'developer';
  created_by: string;
  created_at: string;
}

/** A GitHub Actions OIDC token already exchanged, kept until it could no longer be accepted. */
export interface UsedOidcTokensTable {
  /** The token's `jti` claim (unique per token, chosen by the issuer). */
  jti: string;
  /** The token's `exp` plus the exchange's clock tolerance: after it the token is refused anyway. */
  expires_at: string;
  used_at: string;
  /** The Slipway token the exchange gave. */
  token_id: string;
}

export interface DeployHooksTable {
  /** `dph_` identifier: the first part of the hook's URL. */
  id: string;
  project_id: string;
  name: string;
  branch: string;
  /** SHA-256 (hex) of the secret; the secret itself is shown once, when the hook is made. */
  secret_hash: string;
  /** The user who made it. */
  created_by: string;
  created_at: string;
  last_used_at: string | null;
  /** The deployment it queued last: a request while that one is still queued gets it back. */
  last_deployment_id: string | null;
  /** Unix seconds at which the hook's current one-hour window began, and its requests in it. */
  window_start: Generated<number | string>;
  window_count: Generated<number>;
}

/** A one-time code the dashboard gives a signed-in member for one protected host (docs/protection.md). */
export interface ProtectionCodesTable {
  /** SHA-256 (hex) of the code. */
  code_hash: string;
  project_id: string;
  /** The host (lowercase, no port) the code opens, and nothing else. */
  host: string;
  user_id: string;
  expires_at: string;
  /** Set when the edge exchanged it: a code works once. */
  used_at: string | null;
}

/** An expiring share link of a protected project (docs/protection.md). */
export interface ProtectionLinksTable {
  /** `psl_` identifier. */
  id: string;
  project_id: string;
  /** SHA-256 (hex) of the link's token; the token is shown once. */
  token_hash: string;
  /** The page the link opens, without its token. */
  url: string;
  created_by: string;
  created_at: string;
  expires_at: string;
}

/** An unreferenced blob waiting out its grace period before removal (migration 027). */
export interface CondemnedBlobsTable {
  /** Its key in the blob store: `blobs/<ab>/<sha256>`. */
  key: string;
  /** When a collection found it unreferenced. */
  since: string;
}

export interface Database {
  users: UsersTable;
  tokens: TokensTable;
  organizations: OrganizationsTable;
  memberships: MembershipsTable;
  projects: ProjectsTable;
  deployments: DeploymentsTable;
  deployment_counts: DeploymentCountsTable;
  project_counts: ProjectCountsTable;
  branch_aliases: BranchAliasesTable;
  deployment_logs: DeploymentLogsTable;
  jobs: JobsTable;
  domains: DomainsTable;
  uploaded_files: UploadedFilesTable;
  env_vars: EnvVarsTable;
  webhooks: WebhooksTable;
  webhook_attempts: WebhookAttemptsTable;
  rate_limits: RateLimitsTable;
  alerts: AlertsTable;
  health_checks: HealthChecksTable;
  traffic_rollups: TrafficRollupsTable;
  traffic_status_counts: TrafficStatusCountsTable;
  runtime_rollups: RuntimeRollupsTable;
  ledger_entries: LedgerEntriesTable;
  idempotency_keys: IdempotencyKeysTable;
  certificates: CertificatesTable;
  acme_accounts: AcmeAccountsTable;
  acme_challenges: AcmeChallengesTable;
  runtime_samples: RuntimeSamplesTable;
  sessions: SessionsTable;
  trust_policies: TrustPoliciesTable;
  used_oidc_tokens: UsedOidcTokensTable;
  deploy_hooks: DeployHooksTable;
  protection_codes: ProtectionCodesTable;
  protection_links: ProtectionLinksTable;
  condemned_blobs: CondemnedBlobsTable;
}
