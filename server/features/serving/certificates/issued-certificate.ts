/** A certificate ready to serve, from an ACME server or made locally. */
export interface IssuedCertificate {
  /** The leaf certificate followed by its chain, PEM. */
  certPem: string;
  /** The leaf's private key, PEM (stored encrypted). */
  keyPem: string;
  /** Who issued it, for people (the issuer's common name). */
  issuer: string;
  selfSigned: boolean;
  notBefore: Date;
  notAfter: Date;
}
