export { backupCommand, restoreCommand } from './command.ts';
