import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import * as acme from 'acme-client';
import type { Deps } from '../../../platform/deps/deps.ts';
import { acmeAccountKey, rememberAccountUrl } from './acme-account.ts';
import { putChallenge, removeChallenge } from './challenge-store.ts';
import type { IssuedCertificate } from './issued-certificate.ts';

type IssuerDeps = Pick<Deps, 'db' | 'cipher' | 'clock' | 'config' | 'log'>;

let trustedCaFile: string | undefined;

/**
 * Makes acme-client trust SLIPWAY_ACME_CA_FILE besides the usual roots (a test CA such as
 * pebble's). acme-client has one shared axios instance and no per-client agent, so this is
 * process-wide; a process has one ACME configuration, so that is what is wanted.
 */
function trustCa(caFile: string | undefined): void {
  if (!caFile || trustedCaFile === caFile) return;
  acme.axios.defaults.httpsAgent = new Agent({ ca: [...rootCertificates, readFileSync(caFile, 'utf8')] });
  trustedCaFile = caFile;
}

/**
 * Orders a certificate for `domain` from SLIPWAY_ACME_DIRECTORY with the HTTP-01 challenge:
 * the answer goes to the database, where every edge answers
 * `/.well-known/acme-challenge/<token>` from, so the CA may reach any edge behind the domain.
 * Throws with the CA's reason when the order fails.
 */
export async function orderCertificate(deps: IssuerDeps, domain: string): Promise<IssuedCertificate> {
  const directoryUrl = deps.config.acmeDirectory;
  if (!directoryUrl) throw new Error('SLIPWAY_ACME_DIRECTORY is not set');
  trustCa(deps.config.acmeCaFile);
  const client = new acme.Client({
    directoryUrl,
    accountKey: await acmeAccountKey(deps, directoryUrl, deps.config.acmeEmail),
    // Poll from 1 s, not acme-client's 5 s: validations usually take a second or two.
    backoffAttempts: 10,
    backoffMin: 1000,
    backoffMax: 30_000,
  });
  // With a known key this finds the existing account (RFC 8555, 7.3.1) rather than making one.
  await client.createAccount({
    termsOfServiceAgreed: true,
    ...(deps.config.acmeEmail ? { contact: [`mailto:${deps.config.acmeEmail}`] } : {}),
  });
  await rememberAccountUrl(deps, directoryUrl, client.getAccountUrl());

  const order = await client.createOrder({ identifiers: [{ type: 'dns', value: domain }] });
  for (const authz of await client.getAuthorizations(order)) {
    // The CA may reuse an authorization this account passed recently.
    if (authz.status === 'valid') continue;
    const challenge = authz.challenges.find((c) => c.type === 'http-01');
    if (!challenge) {
      throw new Error(`the ACME server offered no http-01 challenge for ${authz.identifier.value}`);
    }
    const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
    await putChallenge(deps, { token: challenge.token, keyAuthorization, domain });
    try {
      await client.completeChallenge(challenge);
      await client.waitForValidStatus(challenge);
    } finally {
      await removeChallenge(deps, challenge.token);
    }
  }
  const [keyPem, csr] = await acme.crypto.createCsr(
    { commonName: domain, altNames: [domain] },
    await acme.crypto.createPrivateEcdsaKey(),
  );
  const finalized = await client.finalizeOrder(order, csr);
  const certPem = await client.getCertificate(finalized);
  const info = acme.crypto.readCertificateInfo(certPem);
  return {
    certPem,
    keyPem: keyPem.toString(),
    issuer: info.issuer.commonName ?? 'unknown issuer',
    selfSigned: false,
    notBefore: info.notBefore,
    notAfter: info.notAfter,
  };
}
