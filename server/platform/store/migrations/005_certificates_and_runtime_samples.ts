import type { Kysely, Migration } from 'kysely';

/**
 * Certificates of custom domains (with the ACME account and the HTTP-01 tokens any edge process
 * answers), per-minute CPU and memory samples of server apps, and the indexes the pruning of
 * monitoring data needs (it deletes by time alone, which the per-project indexes cannot serve).
 */
export const certificatesAndRuntimeSamples: Migration = {
  async up(db: Kysely<unknown>) {
    // No foreign key to domains: removing a domain must not depend on its certificate; the
    // renewal check deletes certificates whose domain is gone.
    await db.schema
      .createTable('certificates')
      .addColumn('domain_id', 'text', (c) => c.primaryKey())
      .addColumn('domain', 'text', (c) => c.notNull())
      .addColumn('cert_pem', 'text', (c) => c.notNull())
      .addColumn('key_ciphertext', 'text', (c) => c.notNull())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('self_signed', 'integer', (c) => c.notNull())
      .addColumn('not_before', 'text', (c) => c.notNull())
      .addColumn('not_after', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('certificates_domain').on('certificates').column('domain').execute();
    await db.schema.createIndex('certificates_not_after').on('certificates').column('not_after').execute();

    await db.schema
      .createTable('acme_accounts')
      .addColumn('directory_url', 'text', (c) => c.primaryKey())
      .addColumn('key_ciphertext', 'text', (c) => c.notNull())
      .addColumn('account_url', 'text')
      .addColumn('email', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('acme_challenges')
      .addColumn('token', 'text', (c) => c.primaryKey())
      .addColumn('key_authorization', 'text', (c) => c.notNull())
      .addColumn('domain', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('runtime_samples')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('minute', 'text', (c) => c.notNull())
      .addColumn('deployment_id', 'text', (c) => c.notNull())
      .addColumn('samples', 'integer', (c) => c.notNull())
      .addColumn('cpu_sum', 'bigint', (c) => c.notNull())
      .addColumn('cpu_max', 'integer', (c) => c.notNull())
      .addColumn('ram_sum', 'bigint', (c) => c.notNull())
      .addColumn('ram_max', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('runtime_samples_pk', ['project_id', 'minute', 'deployment_id'])
      .execute();
    await db.schema.createIndex('runtime_samples_minute').on('runtime_samples').column('minute').execute();

    await db.schema.createIndex('health_checks_at').on('health_checks').column('at').execute();
    await db.schema.createIndex('request_rollups_minute').on('request_rollups').column('minute').execute();
  },
};
