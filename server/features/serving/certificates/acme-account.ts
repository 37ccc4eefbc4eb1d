import * as acme from 'acme-client';
import type { Deps } from '../../../platform/deps/deps.ts';

type AccountDeps = Pick<Deps, 'db' | 'cipher' | 'clock'>;

/**
 * The account key for an ACME directory, created on first use and kept (encrypted): the CA
 * knows the account by its key, and rate limits and revocation follow the account. When two
 * workers create it at once, the first insert wins and both use that key.
 */
export async function acmeAccountKey(
  deps: AccountDeps,
  directoryUrl: string,
  email?: string,
): Promise<string> {
  const existing = await findKey(deps, directoryUrl);
  if (existing) return existing;
  const key = (await acme.crypto.createPrivateEcdsaKey()).toString();
  await deps.db
    .insertInto('acme_accounts')
    .values({
      directory_url: directoryUrl,
      key_ciphertext: deps.cipher.encrypt(key),
      account_url: null,
      email: email ?? null,
      created_at: deps.clock.now().toISOString(),
    })
    .onConflict((oc) => oc.column('directory_url').doNothing())
    .execute();
  const stored = await findKey(deps, directoryUrl);
  if (!stored) throw new Error(`the ACME account key for ${directoryUrl} could not be stored`);
  return stored;
}

async function findKey(deps: AccountDeps, directoryUrl: string): Promise<string | null> {
  const row = await deps.db
    .selectFrom('acme_accounts')
    .select('key_ciphertext')
    .where('directory_url', '=', directoryUrl)
    .executeTakeFirst();
  return row ? deps.cipher.decrypt(row.key_ciphertext) : null;
}

/** Notes the account's URL once the CA has answered, for people looking at the database. */
export async function rememberAccountUrl(deps: Pick<Deps, 'db'>, directoryUrl: string, url: string) {
  await deps.db
    .updateTable('acme_accounts')
    .set({ account_url: url })
    .where('directory_url', '=', directoryUrl)
    .execute();
}
