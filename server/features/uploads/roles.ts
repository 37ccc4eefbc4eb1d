/**
 * The uploads feature's second public entry: what the process roles and the build job use: uploaded files laid out for a build, and their clean-up.
 * Apart from index.ts so that the API, which loads index.ts, does not load them
 * (docs/architecture.md#features).
 */
export { cleanUploads } from './clean-uploads.ts';
export { materializeFiles } from './materialize.ts';
