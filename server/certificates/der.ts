/**
 * The few DER (ASN.1) encoders a self-signed X.509 certificate needs. DER is tag, length,
 * content; a length of 128 or more is written as 0x80 | (count of length bytes), then the bytes.
 */

function lengthBytes(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), lengthBytes(body.length), body]);
}

export const sequence = (...items: Buffer[]) => tlv(0x30, ...items);
export const set = (...items: Buffer[]) => tlv(0x31, ...items);
export const boolean = (v: boolean) => tlv(0x01, Buffer.from([v ? 0xff : 0x00]));
export const octetString = (b: Buffer) => tlv(0x04, b);
export const utf8String = (s: string) => tlv(0x0c, Buffer.from(s, 'utf8'));
/** A BIT STRING of whole bytes (no unused bits), as signatures and keys are. */
export const bitString = (b: Buffer) => tlv(0x03, Buffer.from([0]), b);
/** `[n]` EXPLICIT, constructed context-specific tag. */
export const explicit = (n: number, inner: Buffer) => tlv(0xa0 | n, inner);
/** `[n]` IMPLICIT on a primitive string (GeneralName's dNSName is `[2] IA5String`). */
export const implicitPrimitive = (n: number, value: Buffer) => tlv(0x80 | n, value);

/** A non-negative INTEGER from big-endian bytes: no redundant leading zeros, a 0x00 before a high bit. */
export function unsignedInteger(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const trimmed = bytes.subarray(i);
  const body =
    trimmed.length > 0 && trimmed[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed;
  return tlv(0x02, body.length > 0 ? body : Buffer.from([0]));
}

export const smallInteger = (n: number) => unsignedInteger(Buffer.from([n]));

export function objectIdentifier(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const out: number[] = [parts[0]! * 40 + parts[1]!];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [];
    let v = part;
    do {
      chunk.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i]! |= 0x80;
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** X.509 time: UTCTime up to 2049, GeneralizedTime from 2050 (RFC 5280, 4.1.2.5). */
export function time(d: Date): Buffer {
  const iso = d.toISOString();
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '');
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, 'ascii'))
    : tlv(0x18, Buffer.from(`${digits}Z`, 'ascii'));
}

/** DER bytes as a PEM block with 64-character lines. */
export function toPem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}
