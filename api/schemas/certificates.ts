import { z } from 'zod';
import { Timestamp } from './common.ts';

export const Certificate = z.object({
  /** Who issued it: the CA's common name, or `Slipway self-signed (<domain>)`. */
  issuer: z.string(),
  /** True when made locally because no ACME directory is configured: browsers warn about it. */
  selfSigned: z.boolean(),
  /** Valid from. */
  notBefore: Timestamp,
  /** Valid until; renewed from 30 days before. */
  notAfter: Timestamp,
  /** The certificate and its chain, PEM (public; trust a self-signed one with `curl --cacert`). */
  pem: z.string(),
});
export type Certificate = z.infer<typeof Certificate>;

export const DomainCertificate = z.object({
  /** The host name. */
  domain: z.string(),
  /** `pending`, `active` or `failed`, as on the domain. */
  sslStatus: z.enum(['pending', 'active', 'failed']),
  /** Why the last certificate request failed; null when it did not. */
  sslError: z.string().nullable(),
  /** The certificate served for the domain; null until one is issued. */
  certificate: Certificate.nullable(),
});
export type DomainCertificate = z.infer<typeof DomainCertificate>;
