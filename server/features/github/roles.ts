/**
 * The github feature's second public entry: what the process roles and the build job use: a build's access to its repository.
 * Apart from index.ts so that the API, which loads index.ts, does not load them
 * (docs/architecture.md#features).
 */
export { repositoryAccess } from './repository-access.ts';
