/**
 * The public entry of the backup feature: `slipway backup` and `slipway restore`.
 * The rest of the service imports these, never another file of the folder
 * (docs/architecture.md#features).
 */
export { backupCommand, restoreCommand } from './command.ts';
