import type { IncomingMessage, ServerResponse } from 'node:http';

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** A small self-contained HTML page; `title` and `message` are plain text and get escaped. */
export function renderPage(status: number, title: string, message: string): string {
  const t = escapeHtml(title);
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width,initial-scale=1"><title>${status}: ${t}</title>` +
    `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:15vh auto;padding:0 1rem;color:#222}` +
    `h1{font-size:1.4rem}code{background:#f3f3f3;padding:0 .25rem}small{color:#777}</style></head>` +
    `<body><h1>${t}</h1><p>${escapeHtml(message)}</p><p><small>${status} · Slipway edge</small></p></body></html>\n`
  );
}

/** One of the edge's own answers: its status, title, words (plain text) and extra headers. */
export interface EdgePage {
  status: number;
  title: string;
  message: string;
  headers?: Record<string, string>;
}

/** Every page the edge answers with itself, by what happened; the words a visitor reads. */
export const EDGE_PAGES = {
  unknownHost: (host: string): EdgePage =>
    host
      ? {
          status: 404,
          title: 'Unknown host',
          message: `Nothing is deployed at ${host}. Check the URL; for a custom domain, check that it is added to a project and verified.`,
        }
      : {
          status: 404,
          title: 'Unknown host',
          message: 'The request has no Host header, so there is no deployment to serve.',
        },
  suspended: (host: string): EdgePage => ({
    status: 503,
    title: 'Project suspended',
    message: `The project served at ${host} is suspended. Its owner can resume it with "slipway project resume".`,
  }),
  noProduction: (host: string): EdgePage => ({
    status: 404,
    title: 'No production deployment yet',
    message: `The project served at ${host} has no live production deployment yet. Deploy its production branch to publish it.`,
  }),
  protectedHost: (): EdgePage => ({
    status: 401,
    title: 'Protected deployment',
    message: 'This deployment is protected, and this edge has no way to sign visitors in.',
  }),
  noBranchDeployment: (host: string): EdgePage => ({
    status: 404,
    title: 'No live preview of this branch yet',
    message: `${host} serves the newest live preview of its branch, and none has gone live yet. It will serve the first one that does.`,
  }),
  failed: (deploymentId: string): EdgePage => ({
    status: 404,
    title: 'Deployment failed',
    message: `Deployment ${deploymentId} failed, so there is nothing to serve here. Its build log says why.`,
  }),
  building: (deploymentId: string, status: string): EdgePage => ({
    status: 503,
    title: 'Deployment is building',
    message: `Deployment ${deploymentId} is ${status}. This page will serve it once it is live.`,
    headers: { 'Retry-After': '5' },
  }),
  startFailed: (deploymentId: string): EdgePage => ({
    status: 502,
    title: 'The app could not start',
    message: `Deployment ${deploymentId} could not start its server process. Its runtime log says why.`,
    headers: { 'Retry-After': '10' },
  }),
  notRunning: (deploymentId: string): EdgePage => ({
    status: 503,
    title: 'The app is not running',
    message: `Deployment ${deploymentId} runs a server process, which is not running on this edge. Try again in a few seconds.`,
    headers: { 'Retry-After': '5' },
  }),
  notResponding: (): EdgePage => ({
    status: 502,
    title: 'The app is not responding',
    message:
      "This deployment's server process is not accepting connections; it may be starting or restarting after a crash. See the deployment's runtime log.",
    headers: { 'Retry-After': '5' },
  }),
  edgeError: (): EdgePage => ({
    status: 500,
    title: 'Edge error',
    message: 'The edge could not serve this request. Try again; if it persists, check the server log.',
  }),
  filesIncomplete: (path: string): EdgePage => ({
    status: 500,
    title: 'Deployment files are incomplete',
    message: `The file ${path} is listed in this deployment's artifact but missing from the artifact store. Redeploy to rebuild it.`,
  }),
  filesNotAvailable: (): EdgePage => ({
    status: 503,
    title: 'Deployment files not available',
    message:
      'This deployment has no files in the artifact store yet. Try again in a few seconds; if it persists, redeploy.',
    headers: { 'Retry-After': '5' },
  }),
  severalHosts: (): EdgePage => ({
    status: 400,
    title: 'Bad request',
    message: 'The request has more than one Host header, so it names no one deployment to serve.',
  }),
  badPath: (): EdgePage => ({
    status: 400,
    title: 'Bad request',
    message: 'The request path is not valid percent-encoding.',
  }),
  pageNotFound: (path: string): EdgePage => ({
    status: 404,
    title: 'Page not found',
    message: `This deployment has no page at ${path}.`,
  }),
  methodNotAllowed: (method: string | undefined): EdgePage => ({
    status: 405,
    title: 'Method not allowed',
    message: `This deployment serves static files, which answer GET and HEAD only, not ${method}.`,
    headers: { Allow: 'GET, HEAD' },
  }),
};

/**
 * Sends one of the edge's own pages (unknown host, building, suspended, ...). They are never
 * cached: the same URL serves the app as soon as its state changes. Returns the body bytes sent.
 */
export function sendPage(req: IncomingMessage, res: ServerResponse, page: EdgePage): number {
  const { status, title, message, headers = {} } = page;
  const body = Buffer.from(renderPage(status, title, message));
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': body.length,
    'Cache-Control': 'no-store',
    ...headers,
  });
  if (req.method === 'HEAD') {
    res.end();
    return 0;
  }
  res.end(body);
  return body.length;
}
