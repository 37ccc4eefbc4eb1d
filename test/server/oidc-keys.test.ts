import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOidcKeys } from '../../server/platform/deps/oidc-keys.ts';

/** The issuer's keys, found through its discovery document on a real server on 127.0.0.1. */
describe('OIDC keys by discovery', () => {
  let server: Server;
  let url: string;
  let jwk: JWK;
  let token: string;
  /** What the discovery document answers: set per test. */
  let discovery: { status: number; body: unknown } = { status: 200, body: {} };
  let discoveryReads = 0;

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k', alg: 'ES256' };
    server = createServer((req, res) => {
      if (req.url === '/.well-known/openid-configuration') {
        discoveryReads++;
        res.writeHead(discovery.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(discovery.body));
      } else if (req.url === '/somewhere/else/jwks') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    token = await new SignJWT({ sub: 'x' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k' })
      .setIssuer(url)
      .sign(pair.privateKey);
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const keysOf = () => createOidcKeys({ issuer: url, keysCooldownMs: 1 });

  it('verifies with the keys at the jwks_uri the document names', async () => {
    discovery = { status: 200, body: { issuer: url, jwks_uri: `${url}/somewhere/else/jwks` } };
    const { payload } = await jwtVerify(token, keysOf(), { issuer: url });
    expect(payload.sub).toBe('x');
  });

  it('says what is wrong with the document, and reads it again on the next token after a failure', async () => {
    const keys = keysOf();
    const before = discoveryReads;
    discovery = { status: 404, body: {} };
    await expect(jwtVerify(token, keys)).rejects.toMatchObject({
      code: 'ERR_JOSE_GENERIC',
      message: `could not read ${url}/.well-known/openid-configuration: it answered 404`,
    });
    discovery = { status: 200, body: { issuer: url } };
    await expect(jwtVerify(token, keys)).rejects.toThrow(
      `${url}/.well-known/openid-configuration names no jwks_uri`,
    );
    discovery = {
      status: 200,
      body: { issuer: 'https://evil.example', jwks_uri: `${url}/somewhere/else/jwks` },
    };
    await expect(jwtVerify(token, keys)).rejects.toThrow(`is of issuer https://evil.example, not ${url}`);
    discovery = { status: 200, body: { issuer: url, jwks_uri: `${url}/somewhere/else/jwks` } };
    expect((await jwtVerify(token, keys)).payload.sub).toBe('x');
    expect((await jwtVerify(token, keys)).payload.sub).toBe('x');
    expect(discoveryReads - before).toBe(4);
  });
});
