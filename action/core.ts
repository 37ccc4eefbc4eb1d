/** @actions/core, as `loadCore` answers it. */
export type Core = typeof import('@actions/core');

let loading: Promise<Core> | undefined;

/**
 * @actions/core, loaded on first use (once): ncc puts it in a chunk of its own. It brings
 * @actions/http-client and undici (for OIDC tokens), which made the Action's start-up almost
 * three times as long when it was loaded at start; the first request to Slipway does not need it.
 */
export const loadCore = (): Promise<Core> => (loading ??= import('@actions/core'));
