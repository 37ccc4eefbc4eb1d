/**
 * Names the deployment that answered, on every answer about one (its files, its app's responses,
 * its pages). Here rather than in server.ts because the static server writes it itself: a warm
 * file's answer passes it to writeHead with the file's prepared fields (see static.ts).
 */
export const DEPLOYMENT_HEADER = 'X-Slipway-Deployment';

/**
 * The header that marks the service's own health probes to the edge, which does not count them
 * as visitors' traffic. Its value is sealed with the service's encryption key, so a visitor
 * cannot forge it to hide requests from a project's metrics; the edge removes it before a
 * request reaches a deployment's server app.
 */
export const PROBE_HEADER = 'x-slipway-probe';
