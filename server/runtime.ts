import type { Logger } from 'pino';
import { createLogger, logFormat } from './core/log-format.ts';
import { ensureDataDir, type Config } from './platform/config.ts';
import { createJobQueue } from './platform/queue/queue.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { createCipher, loadEncryptionKey } from './core/secrets.ts';
import { createDns, type Dns } from './core/dns.ts';
import type { Deps } from './platform/deps/deps.ts';
import { createMetricsCache } from './platform/deps/metrics-cache.ts';
import { lazyPaymentKey } from './features/billing/index.ts';
import { protectionKeyOf } from './features/serving/index.ts';
import { createTokenCache } from './platform/deps/token-cache.ts';
import { createOidcKeys } from './platform/deps/oidc-keys.ts';
import { createUrls } from './platform/deps/urls.ts';
import { openStore } from './platform/store/db.ts';
import { createRateCounts } from './platform/deps/rate-counts/create-rate-counts.ts';
import { createOpsMetrics } from './platform/ops-metrics/ops-metrics.ts';

export interface RuntimeOptions {
  clock?: Clock;
  log?: Logger;
  dns?: Dns;
  /** Told the migrations this start applied (none when the database was up to date). */
  onMigrated?: (names: string[]) => void;
}

/** Opens the database (migrating it), loads the key and wires the shared services. */
export async function createDeps(config: Config, opts: RuntimeOptions = {}): Promise<Deps> {
  const log =
    opts.log ?? createLogger(config.logLevel, logFormat(config.logFormat, process.stdout.isTTY === true));
  const clock = opts.clock ?? systemClock;
  ensureDataDir(config.dataDir);
  const store = openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.dbPoolSize,
    onError: (err, what) => log.warn({ err }, what),
  });
  const key = loadEncryptionKey(config.encryptionKey, config.dataDir, (m) => log.warn(m));
  const cipher = createCipher(key);
  const applied = await store.migrate(cipher);
  if (applied.length > 0) log.info({ migrations: applied }, 'database migrated');
  opts.onMigrated?.(applied);
  return {
    store,
    db: store.db,
    config,
    clock,
    cipher,
    log,
    queue: createJobQueue(store.db, store.dialect, clock, store.notifier),
    urls: createUrls(config),
    dns: opts.dns ?? createDns(config.dnsServers),
    tokens: createTokenCache(store.notifier, config.tokenCacheTtlMs),
    metrics: createMetricsCache(() => clock.now().getTime()),
    oidcKeys: createOidcKeys(config.oidc),
    paymentKey: lazyPaymentKey(config, log),
    protectionKey: protectionKeyOf(key),
    rateCounts: createRateCounts(store, {
      onError: (err) => log.warn({ err }, 'writing rate-limit counts failed'),
    }),
    ops: createOpsMetrics(),
  };
}

/** Writes what this process holds back (the rate-limit counts), then closes the database. */
export async function closeDeps(deps: Pick<Deps, 'store' | 'rateCounts'>): Promise<void> {
  try {
    await deps.rateCounts.close();
  } finally {
    await deps.store.close();
  }
}
