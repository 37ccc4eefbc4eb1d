import { readFileSync } from 'node:fs';
import { normalisePrivateKey } from '../../../api/github-app-key.ts';
import { ConfigError } from '../../core/config-error.ts';
import { list, type Env } from './env-schema.ts';

/** Sign in with GitHub on the dashboard, when the App's OAuth client id and secret are set. */
export function githubSignIn(env: Env) {
  if (!env.GITHUB_CLIENT_ID || !env.GITHUB_CLIENT_SECRET) return undefined;
  const entries = list(env.SLIPWAY_GITHUB_SIGN_UP).map((x) => x.toLowerCase());
  return {
    clientId: env.GITHUB_CLIENT_ID,
    clientSecret: env.GITHUB_CLIENT_SECRET,
    apiUrl: (env.GITHUB_API_URL ?? 'https://api.github.com').replace(/\/+$/, ''),
    signUp: {
      domains: entries.filter((x) => !x.startsWith('org:')),
      orgs: entries.filter((x) => x.startsWith('org:')).map((x) => x.slice(4)),
    },
  };
}

/** The GitHub App workers mint installation tokens with; undefined when it is not configured. */
export function githubApp(env: Env) {
  const key =
    env.PRIVATE_KEY ?? (env.PRIVATE_KEY_PATH ? readFileSync(env.PRIVATE_KEY_PATH, 'utf8') : undefined);
  if (!env.APP_ID || !key) return undefined;
  let privateKey: string;
  try {
    privateKey = normalisePrivateKey(key);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  return {
    appId: env.APP_ID,
    privateKey,
    apiUrl: (env.GITHUB_API_URL ?? 'https://api.github.com').replace(/\/+$/, ''),
  };
}
