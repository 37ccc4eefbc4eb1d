/**
 * The public entry of the github feature: the App's event queue, repository URLs, policy, credentials and access.
 * The rest of the service imports these (and roles.ts), never another file of the folder
 * (docs/architecture.md#features).
 */
export { GITHUB_EVENT_JOB } from './events/event-job.ts';
export { pruneGitHubEvents } from './events/finish-event.ts';
export {
  MASK,
  maskedRepositoryUrl,
  sealCredentials,
  splitRepositoryCredentials,
} from './repository-credentials.ts';
export { repositoryRefusal, repositorySettings, staticRepositoryRefusal } from './repository-policy.ts';
export { parseRepositoryUrl } from './repository-url.ts';
export { githubEventRoutes } from './routes.ts';
