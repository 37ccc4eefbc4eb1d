import type { Logger } from 'pino';
import { createLogger, logFormat } from './lib/log-format.ts';
import { ensureDataDir, type Config } from './config.ts';
import { createJobQueue } from './queue/queue.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { createCipher, loadEncryptionKey } from './lib/secrets.ts';
import { createDns, type Dns } from './lib/dns.ts';
import type { Deps } from './services/deps.ts';
import { createMetricsCache } from './services/monitoring/metrics-cache.ts';
import { lazyPaymentKey } from './payments/secret.ts';
import { protectionKeyOf } from './services/protection/protection-cookie.ts';
import { createTokenCache } from './services/token-cache.ts';
import { createOidcKeys } from './services/trust/oidc-keys.ts';
import { createUrls } from './services/urls.ts';
import { openStore } from './store/db.ts';
import { createRateCounts } from './services/rate-counts/create-rate-counts.ts';
import { createOpsMetrics } from './ops-metrics/ops-metrics.ts';

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
