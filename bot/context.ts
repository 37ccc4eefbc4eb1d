import type { GitHubAccess } from './github/installations.ts';
import type { BotServices } from './services.ts';

/** What every handler gets: the services and access to GitHub. */
export interface Bot extends BotServices {
  github: GitHubAccess;
}
