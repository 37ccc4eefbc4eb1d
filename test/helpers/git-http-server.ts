import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname } from 'node:path';

export interface GitHttpServer {
  /** `http://127.0.0.1:<port>/<name>` of the repository, without credentials. */
  url: string;
  /** The `user:password` pairs requests came with (decoded), in order; `null` for none. */
  credentials: (string | null)[];
  stop(): Promise<void>;
}

/**
 * A real git smart-HTTP server for one repository: `git http-backend` (CGI) behind a Node HTTP
 * server on 127.0.0.1. With `auth`, every request needs HTTP Basic credentials for which
 * `auth(user, password)` is true; others get 401 with a challenge, as GitHub answers.
 */
export async function startGitHttpServer(
  repoDir: string,
  opts: { auth?: (user: string, password: string) => boolean } = {},
): Promise<GitHttpServer> {
  const name = basename(repoDir);
  const handler = gitHttpHandler(dirname(repoDir), opts);
  const server: Server = createServer(handler);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/${name}`,
    credentials: handler.credentials,
    stop: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

/**
 * The request handler of the server above, for the repositories under `projectRoot` (a request
 * for `/<path>` serves `<projectRoot>/<path>`), to mount on another test server (the GitHub
 * stand-in serves git and its API on one host, as GitHub Enterprise Server does).
 */
export function gitHttpHandler(
  projectRoot: string,
  opts: { auth?: (user: string, password: string) => boolean } = {},
): ((req: IncomingMessage, res: ServerResponse) => void) & { credentials: (string | null)[] } {
  const credentials: (string | null)[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const given = basicCredentials(req);
    credentials.push(given);
    if (opts.auth) {
      const [user = '', ...rest] = (given ?? '').split(':');
      if (given === null || !opts.auth(user, rest.join(':'))) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end('authentication required\n');
        return;
      }
    }
    const url = new URL(req.url ?? '/', 'http://localhost');
    const backend = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        GIT_PROJECT_ROOT: projectRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        REQUEST_METHOD: req.method ?? 'GET',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        // git gzips large requests; http-backend inflates them itself when told.
        ...(req.headers['content-encoding']
          ? { HTTP_CONTENT_ENCODING: String(req.headers['content-encoding']) }
          : {}),
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: String(req.headers['content-length']) } : {}),
        REMOTE_USER: given?.split(':')[0] ?? '',
        REMOTE_ADDR: '127.0.0.1',
        ...(req.headers['git-protocol'] ? { GIT_PROTOCOL: String(req.headers['git-protocol']) } : {}),
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    req.pipe(backend.stdin);
    // CGI: headers, a blank line, the body.
    let head = Buffer.alloc(0);
    let headersDone = false;
    backend.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const colon = line.indexOf(':');
        const field = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (field.toLowerCase() === 'status') status = parseInt(value, 10);
        else res.setHeader(field, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    backend.on('close', () => res.end());
    backend.on('error', () => res.destroy());
  };
  return Object.assign(handle, { credentials });
}

function basicCredentials(req: IncomingMessage): string | null {
  const m = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return m ? Buffer.from(m[1]!, 'base64').toString('utf8') : null;
}
