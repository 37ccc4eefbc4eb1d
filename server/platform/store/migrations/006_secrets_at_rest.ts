import { sql, type Kysely, type Migration } from 'kysely';
import type { Cipher } from '../../../core/secrets.ts';
import type { DialectHelpers } from '../dialect.ts';

/**
 * Secrets that were kept in plaintext are encrypted with the service's key: the credentials of
 * repository URLs move to their own encrypted column, and the stored answers of idempotent
 * requests (one of them can hold a new API token) are encrypted. Rate-limit windows are counted
 * per user instead of per token; the old windows (at most an hour's worth) are dropped.
 *
 * On SQLite the plaintext must not survive in the file either: `secure_delete` zeroes the space
 * old values leave, and a checkpoint moves the rewritten pages out of the write-ahead log (whose
 * old frames hold the values) and empties it. On PostgreSQL the old row versions stay on disk
 * until a VACUUM (docs/security.md says so).
 */
/*
 * As server/features/github/repository-credentials.ts was when this migration was written: a migration
 * keeps its own copy, so that later changes to the live code never change what it did.
 */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*)@/i;

function splitRepositoryCredentials(url: string): { url: string; credentials: string | null } {
  const m = USERINFO.exec(url);
  if (!m) return { url, credentials: null };
  const [whole, scheme, userinfo] = m as unknown as [string, string, string];
  const web = /^https?:\/\/$/i.test(scheme);
  if (!web && !userinfo.includes(':')) return { url, credentials: null };
  const rest = url.slice(whole.length);
  return { url: scheme + rest, credentials: userinfo === '' ? null : userinfo };
}

const sealCredentials = (cipher: Cipher, credentials: string | null) =>
  credentials === null ? null : cipher.encrypt(credentials);

/** The columns this migration reads and writes, as they are at this point. */
interface Tables {
  projects: { id: string; repository_url: string; repository_credentials: string | null };
  idempotency_keys: { user_id: string; key: string; response_body: string | null };
}

export function secretsAtRest(dialect: DialectHelpers, cipher: Cipher): Migration {
  return {
    async up(schemaDb: Kysely<unknown>) {
      const db = schemaDb as unknown as Kysely<Tables>;
      const sqlite = dialect.name === 'sqlite';
      if (sqlite) await sql`PRAGMA secure_delete = ON`.execute(db);
      await schemaDb.schema.alterTable('projects').addColumn('repository_credentials', 'text').execute();
      const projects = await db
        .selectFrom('projects')
        .select(['id', 'repository_url'])
        .where('repository_url', 'like', '%@%')
        .execute();
      for (const p of projects) {
        const { url, credentials } = splitRepositoryCredentials(p.repository_url);
        if (credentials === null) continue;
        await db
          .updateTable('projects')
          .set({ repository_url: url, repository_credentials: sealCredentials(cipher, credentials) })
          .where('id', '=', p.id)
          .execute();
      }

      const answers = await db
        .selectFrom('idempotency_keys')
        .select(['user_id', 'key', 'response_body'])
        .where('response_body', 'is not', null)
        .execute();
      for (const a of answers) {
        await db
          .updateTable('idempotency_keys')
          .set({ response_body: cipher.encrypt(a.response_body ?? '') })
          .where('user_id', '=', a.user_id)
          .where('key', '=', a.key)
          .execute();
      }

      await schemaDb.schema.dropTable('rate_limits').execute();
      await schemaDb.schema
        .createTable('rate_limits')
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('rate_limits_pk', ['user_id', 'window_start'])
        .execute();
      if (sqlite) {
        await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
        await sql`PRAGMA secure_delete = OFF`.execute(db);
      }
    },
  };
}
