/**
 * The identity feature's second public entry: what the process roles and the build job use: the sandbox share of an organization's plan, which builds use.
 * Apart from index.ts so that the API, which loads index.ts, does not load them
 * (docs/architecture.md#features).
 */
export { planOfProject, sandboxShare } from './organizations/sandbox-share.ts';
