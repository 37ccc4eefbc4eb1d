import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import {
  bitString,
  boolean,
  explicit,
  implicitPrimitive,
  objectIdentifier,
  octetString,
  sequence,
  set,
  smallInteger,
  time,
  toPem,
  unsignedInteger,
  utf8String,
} from './der.ts';
import type { IssuedCertificate } from './issued-certificate.ts';

/** The organisation name of every self-signed certificate, so people can tell them apart. */
export const SELF_SIGNED_ORGANIZATION = 'Slipway self-signed';
/** Like Let's Encrypt's, so renewal runs the same way. */
export const SELF_SIGNED_VALIDITY_DAYS = 90;

const OID = {
  commonName: '2.5.4.3',
  organizationName: '2.5.4.10',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

const attribute = (oid: string, value: string) => set(sequence(objectIdentifier(oid), utf8String(value)));
const extension = (oid: string, critical: boolean, value: Buffer) =>
  sequence(objectIdentifier(oid), ...(critical ? [boolean(true)] : []), octetString(value));

/**
 * A self-signed certificate for `domain` with a new P-256 key, for local use when no ACME
 * directory is configured. Browsers warn about it; `curl --cacert <cert>` and Node's `ca`
 * option accept it, which is why it is marked as a CA of itself (as `openssl req -x509` does).
 */
export function createSelfSignedCertificate(domain: string, now: Date): IssuedCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const name = sequence(
    attribute(OID.organizationName, SELF_SIGNED_ORGANIZATION),
    attribute(OID.commonName, domain),
  );
  const algorithm = sequence(objectIdentifier(OID.ecdsaWithSha256));
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive and not starting with zero bytes
  // An hour back, so a client whose clock is a little behind does not see a future certificate.
  const notBefore = new Date(now.getTime() - 3_600_000);
  const notAfter = new Date(now.getTime() + SELF_SIGNED_VALIDITY_DAYS * 86_400_000);
  const tbs = sequence(
    explicit(0, smallInteger(2)),
    unsignedInteger(serial),
    algorithm,
    name,
    sequence(time(notBefore), time(notAfter)),
    name,
    spki,
    explicit(
      3,
      sequence(
        extension(OID.subjectAltName, false, sequence(implicitPrimitive(2, Buffer.from(domain, 'ascii')))),
        extension(OID.basicConstraints, true, sequence(boolean(true))),
        extension(OID.extKeyUsage, false, sequence(objectIdentifier(OID.serverAuth))),
      ),
    ),
  );
  // Node signs with an EC key in DER form (ECDSA-Sig-Value), which is what X.509 wants.
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, algorithm, bitString(signature));
  return {
    certPem: toPem('CERTIFICATE', der),
    keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    issuer: `${SELF_SIGNED_ORGANIZATION} (${domain})`,
    selfSigned: true,
    // X.509 keeps whole seconds.
    notBefore: new Date(Math.floor(notBefore.getTime() / 1000) * 1000),
    notAfter: new Date(Math.floor(notAfter.getTime() / 1000) * 1000),
  };
}
