/**
 * The deployments feature's second public entry: what the process roles and the build job use: what a build records of its deployment and reads of its project.
 * Apart from index.ts so that the API, which loads index.ts, does not load them
 * (docs/architecture.md#features).
 */
export { markBuilding, markDeploying, markFailed, markLive } from './deployment-state.ts';
export { resolveBuildEnv } from './env/resolve-build-env.ts';
export { recordDetectedFramework } from './projects/detected-framework.ts';
