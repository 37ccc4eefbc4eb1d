import type { Dns } from '../../../core/dns.ts';

export interface ChallengeLookup {
  matched: boolean;
  /** TXT values seen at the challenge name, each record's chunks joined. */
  found: string[];
  /** What was seen and what to do next. */
  message: string;
  /** The resolver's error code when the lookup itself failed (not "no such record"). */
  failure?: string;
}

// "The name or the record does not exist": an answer, not a failure.
const NO_RECORD = new Set(['ENOTFOUND', 'ENODATA']);

/** Looks up the ownership TXT record; never throws, a resolver failure is reported in the result. */
export async function lookupChallenge(dns: Dns, name: string, expected: string): Promise<ChallengeLookup> {
  let records: string[][];
  try {
    records = await dns.resolveTxt(name);
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as Error).message;
    if (NO_RECORD.has(code)) {
      return {
        matched: false,
        found: [],
        message: `No TXT record at ${name} yet: add it with the expected value, then verify again (DNS changes can take minutes to appear).`,
      };
    }
    return {
      matched: false,
      found: [],
      failure: code,
      message: `The DNS lookup of ${name} failed (${code}); the domain stays pending: verify again in a minute.`,
    };
  }
  // A TXT record longer than 255 bytes arrives in chunks: the record's value is their concatenation.
  const found = records.map((chunks) => chunks.join(''));
  if (found.includes(expected)) return { matched: true, found, message: 'The TXT record matches.' };
  return {
    matched: false,
    found,
    message: `The TXT record at ${name} does not hold the expected value: set it to the expected value, then verify again.`,
  };
}
