import { KeyObject, randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { IssuedCertificate } from './issued-certificate.ts';

/** The organisation name of every self-signed certificate, so people can tell them apart. */
export const SELF_SIGNED_ORGANIZATION = 'Slipway self-signed';
/** Like Let's Encrypt's, so renewal runs the same way. */
export const SELF_SIGNED_VALIDITY_DAYS = 90;

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** X.509 keeps whole seconds. */
const wholeSeconds = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000);

/**
 * A self-signed certificate for `domain` with a new P-256 key, for local use when no ACME
 * directory is configured. Browsers warn about it; `curl --cacert <cert>` and Node's `ca`
 * option accept it, which is why it is marked as a CA of itself (as `openssl req -x509` does).
 * Encoded by @peculiar/x509 (which acme-client uses too) on Node's own WebCrypto.
 */
export async function createSelfSignedCertificate(domain: string, now: Date): Promise<IssuedCertificate> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive and not starting with zero bytes
  // An hour back, so a client whose clock is a little behind does not see a future certificate.
  const notBefore = wholeSeconds(new Date(now.getTime() - 3_600_000));
  const notAfter = wholeSeconds(new Date(now.getTime() + SELF_SIGNED_VALIDITY_DAYS * 86_400_000));
  const name = new x509.Name([{ '2.5.4.10': [SELF_SIGNED_ORGANIZATION] }, { '2.5.4.3': [domain] }]);
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serial.toString('hex'),
      name,
      notBefore,
      notAfter,
      signingAlgorithm: ALGORITHM,
      keys,
      extensions: [
        new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: domain }]),
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      ],
    },
    webcrypto,
  );
  return {
    certPem: cert.toString('pem'),
    keyPem: KeyObject.from(keys.privateKey).export({ type: 'pkcs8', format: 'pem' }).toString(),
    issuer: `${SELF_SIGNED_ORGANIZATION} (${domain})`,
    selfSigned: true,
    notBefore,
    notAfter,
  };
}
