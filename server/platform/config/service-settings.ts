import { resolve } from 'node:path';
import { parseObjectStorage, type ObjectStorageConfig } from '../storage/object-storage-url.ts';
import type { Env } from './env-schema.ts';
import { githubApp, githubSignIn } from './github.ts';

/** The service's listeners, storage, public URLs, GitHub App and plans. */
export function serviceSettings(env: Env, dataDir: string) {
  return {
    port: env.PORT,
    host: env.HOST,
    dataDir,
    databaseUrl: env.DATABASE_URL,
    dbPoolSize: env.SLIPWAY_DB_POOL_SIZE,
    artifactsDir: resolve(env.SLIPWAY_ARTIFACTS_DIR ?? `${dataDir}/artifacts`),
    /**
     * Artifacts and uploaded files in an S3-compatible bucket instead of the artifacts directory
     * (which then holds only this machine's build caches and temporary files); undefined: local.
     */
    objectStorage: parseObjectStorage(env) as ObjectStorageConfig | undefined,
    /** Object storage: the bytes each edge keeps on its own disk (`<dataDir>/edge-cache`). */
    edgeDiskCache: { dir: `${dataDir}/edge-cache`, maxBytes: env.SLIPWAY_EDGE_DISK_CACHE },
    edgePort: env.SLIPWAY_EDGE_PORT,
    domain: env.SLIPWAY_DOMAIN,
    publicEdgeUrl: env.SLIPWAY_PUBLIC_EDGE_URL,
    publicApiUrl: env.SLIPWAY_PUBLIC_API_URL,
    /** Where workers reach an edge for the health request that makes a deployment live. */
    edgeInternalUrl: env.SLIPWAY_EDGE_INTERNAL_URL ?? `http://127.0.0.1:${env.SLIPWAY_EDGE_PORT}`,
    encryptionKey: env.SLIPWAY_ENCRYPTION_KEY,
    /** Private GitHub repositories are cloned with installation tokens of this App (docs/github-app.md). */
    githubApp: githubApp(env),
    /** Sign in with GitHub on the dashboard (the App's OAuth client); undefined: tokens only. */
    githubSignIn: githubSignIn(env),
    paymentSecret: env.SLIPWAY_PAYMENT_SECRET,
    enterpriseRateLimit: env.SLIPWAY_ENTERPRISE_RATE_LIMIT,
    /** Requests each deploy hook takes per fixed hour (docs/api/deploy-hooks.md). */
    deployHookRateLimit: env.SLIPWAY_DEPLOY_HOOK_RATE_LIMIT,
    /** Who sets an organization's plan: its admins through the API, or only the operator's CLI. */
    planChanges: env.SLIPWAY_PLAN_CHANGES,
    /** The plan of organizations created from now on (users' personal ones included). */
    defaultPlan: env.SLIPWAY_DEFAULT_PLAN,
    /** The preview protection of projects created without one (docs/protection.md). */
    defaultProtection: env.SLIPWAY_DEFAULT_PROTECTION,
  };
}
