import pkg from '../package.json' with { type: 'json' };

/** The version of this Slipway checkout, from its package.json (built into the CLI's bundle). */
export const VERSION: string = pkg.version;
