import { z } from 'zod';
import { id, PageQuery, Timestamp } from './common.ts';

/** A lowercase host name with at least one dot, at most 253 characters, not an IP address. */
export const DomainName = z
  .string()
  .max(253, 'must be at most 253 characters')
  .regex(
    /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/,
    'must be a lowercase host name with at least one dot, such as "www.example.com"',
  )
  .refine((d) => !/^[0-9.]+$/.test(d), 'must be a host name, not an IP address');

export const DnsRecord = z.object({
  /** `TXT` (ownership), `CNAME` (sub-domain) or `A` (apex). */
  type: z.enum(['TXT', 'CNAME', 'A']),
  /** Full record name, e.g. `_slipway-challenge.www.example.com`. */
  name: z.string(),
  /** Record value to set at the DNS provider. */
  value: z.string(),
});
export type DnsRecord = z.infer<typeof DnsRecord>;

/** What a verify that did not match saw. */
export const DomainVerification = z.object({
  /** The TXT value that proves ownership. */
  expected: z.string(),
  /** TXT values the resolver returned for the challenge name (chunks joined); empty when none. */
  found: z.array(z.string()),
  /** What happened and what to do next (no record, wrong value, or the lookup failed). */
  message: z.string(),
});
export type DomainVerification = z.infer<typeof DomainVerification>;

export const Domain = z.object({
  /** `dom_` identifier. */
  id: id('dom'),
  /** Project whose production deployment the domain serves. */
  projectId: id('prj'),
  /** The host name. */
  domain: z.string(),
  /** `pending` until the TXT record is seen, then `verified`. */
  status: z.enum(['pending', 'verified']),
  /** `pending`, `active` (certificate issued) or `failed`. */
  sslStatus: z.enum(['pending', 'active', 'failed']),
  /** When the ownership record was first seen; `null` while pending. */
  verifiedAt: Timestamp.nullable(),
  /**
   * When a pending claim is removed unless verified by then (`SLIPWAY_DOMAIN_CLAIM_TTL`, 7 days
   * by default); `null` once verified. Pending claims block no one: the first project to verify
   * a name gets it. Absent from servers before claims expired.
   */
  expiresAt: Timestamp.nullable().optional(),
  /** When the domain was added. */
  createdAt: Timestamp,
  /** Records to configure at the DNS provider. */
  dnsRecords: z.array(DnsRecord),
  /** On a verify that did not match: what was expected and what the resolver found. */
  verification: DomainVerification.optional(),
});
export type Domain = z.infer<typeof Domain>;

export const AddDomainBody = z.strictObject({
  /** Host name to serve the project's production deployment on. */
  domain: DomainName,
});
export type AddDomainBody = z.infer<typeof AddDomainBody>;

/** `page` and `limit` of the domain list. */
export const ListDomainsQuery = PageQuery;
export type ListDomainsQuery = z.infer<typeof ListDomainsQuery>;
