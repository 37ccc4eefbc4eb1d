/**
 * A GitHub App's private key as given in the environment (PRIVATE_KEY): the PEM text, with its line
 * breaks written as `\n` or not, or that text in base64. Read the same way by the service
 * (server/platform/config.ts) and the bot (bot/settings.ts); throws with a message naming the variable.
 */
export function normalisePrivateKey(value: string): string {
  const text = value.includes('-----BEGIN') ? value : Buffer.from(value, 'base64').toString('utf8');
  const pem = text.replace(/\\n/g, '\n').trim();
  if (!/^-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) {
    throw new Error(
      'PRIVATE_KEY must be the GitHub App private key: the PEM text (-----BEGIN RSA PRIVATE KEY-----...) or its base64',
    );
  }
  return `${pem}\n`;
}
