import type { Kysely, Migration } from 'kysely';

/**
 * GitHub Actions OIDC tokens already exchanged (docs/api/trust-policies.md#one-exchange-per-oidc-token):
 * a job token's `jti` is kept until the token can no longer be accepted (its `exp`, plus the
 * exchange's clock tolerance), so the same token is never exchanged twice; the monitoring run
 * drops rows past `expires_at`.
 */
export const usedOidcTokens: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('used_oidc_tokens')
      .addColumn('jti', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text', (c) => c.notNull())
      .addColumn('token_id', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('used_oidc_tokens_expires_at')
      .on('used_oidc_tokens')
      .column('expires_at')
      .execute();
  },
};
