import { request } from 'node:https';
import type { PeerCertificate, TLSSocket } from 'node:tls';

export interface TlsAnswer {
  status: number;
  body: string;
  /** The certificate the server presented. */
  peer: PeerCertificate;
  /** Whether it verified against `ca` for `servername`. */
  authorized: boolean;
}

/** GET over TLS to 127.0.0.1:port with SNI and Host `servername`, trusting only `ca`. */
export function tlsGet(
  port: number,
  servername: string,
  path: string,
  ca: string | string[],
): Promise<TlsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, servername, headers: { host: servername }, ca, agent: false },
      (res) => {
        const socket = res.socket as TLSSocket;
        const peer = socket.getPeerCertificate();
        const authorized = socket.authorized;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            peer,
            authorized,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}
