/**
 * Names the deployment that answered, on every answer about one (its files, its app's responses,
 * its pages). Here rather than in server.ts because the static server writes it itself: a warm
 * file's answer passes it to writeHead with the file's prepared fields (see static.ts).
 */
export const DEPLOYMENT_HEADER = 'X-Slipway-Deployment';
