import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Manifest } from './artifact-reader.ts';
import { EDGE_PAGES } from './pages.ts';
import type { Target } from './resolve-host.ts';
import { NO_RULES, type RoutingRules } from '../../../platform/routing/match-rules.ts';
import { rulesFolderOf } from '../../../platform/routing/rules-folder.ts';
import { sendRedirect } from './send-redirect.ts';
import { page } from './static-page.ts';
import {
  fileAt,
  fileExistsAt,
  isPrivatePath,
  isRulesFile,
  matchPath,
  requestPath,
  type Match,
} from './static-paths.ts';
import { prepared } from './static-prepared.ts';
import { sendFile } from './static-send.ts';
import type { ByteCounter, StaticState } from './static-state.ts';

/**
 * Answers once the manifest is known: by the deployment's routing rules when it has any
 * (`serveRouted`), else the file the path maps to or the right page (`serveFrom`).
 */
export function serveManifest(
  s: StaticState,
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  manifest: Manifest | null,
  counter: ByteCounter,
): void | Promise<void> {
  if (!manifest) return serveFrom(s, req, res, target, null, counter);
  const rules = s.artifacts.routingRules(manifest, rulesFolderOf(target));
  if (rules === NO_RULES) return serveFrom(s, req, res, target, manifest, counter);
  if (rules instanceof Promise) {
    return rules.then((r) => serveRouted(s, req, res, target, manifest, r, counter));
  }
  return serveRouted(s, req, res, target, manifest, rules, counter);
}

/**
 * Answers by `_redirects` and `_headers`: a redirect from the edge, or the file a rewrite points
 * to, or the file the path maps to as without rules; then the headers of every matching block.
 * Redirects answer any method (a 307 or 308 keeps it); files answer GET and HEAD.
 */
function serveRouted(
  s: StaticState,
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  manifest: Manifest,
  rules: RoutingRules,
  counter: ByteCounter,
): void | Promise<void> {
  const path = requestPath(req.url);
  if (path === null) {
    counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.badPath());
    return;
  }
  const files = manifest.files;
  const answer = rules.redirect(path, req.url ?? '/', (p) => fileExistsAt(files, p));
  const headerRules = rules.headers(path);
  if (answer?.kind === 'redirect') {
    counter.bytes += sendRedirect(req, res, target.deploymentId, answer, headerRules);
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.methodNotAllowed(req.method));
    return;
  }
  let match: Match | null;
  if (answer) {
    // A rewrite serves its target as a request for it would, but with the rule's status.
    match = matchPath(manifest, answer.path, false);
    if (match && answer.status === 404) match = { ...match, status: 404 };
  } else {
    match = matchPath(manifest, path, target.spa);
  }
  if (!match) {
    counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.pageNotFound(path));
    return;
  }
  return sendFile(s, req, res, target.deploymentId, prepared(s, manifest, match), counter, headerRules);
}

/** Answers without routing rules: the file the path maps to, or the right page. */
export function serveFrom(
  s: StaticState,
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  manifest: Manifest | null,
  counter: ByteCounter,
): void | Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.methodNotAllowed(req.method));
    return;
  }
  if (!manifest) {
    counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.filesNotAvailable());
    return;
  }
  const path = requestPath(req.url);
  if (path === null) {
    counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.badPath());
    return;
  }
  // A path that is itself a file answered before needs no matching: only a manifest's own
  // file paths are keys there, and matchPath maps such a path to that file.
  const known = s.preparedFiles.get(manifest)?.[200].get(path);
  if (known) return sendFile(s, req, res, target.deploymentId, known, counter);
  const match = matchPath(manifest, path, target.spa);
  if (!match) {
    counter.bytes += page(req, res, target.deploymentId, EDGE_PAGES.pageNotFound(path));
    return;
  }
  return sendFile(s, req, res, target.deploymentId, prepared(s, manifest, match), counter);
}

/** A server app's asset at exactly the request's path, if it has one: true once answered. */
export function assetFrom(
  s: StaticState,
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  manifest: Manifest | null,
  counter: ByteCounter,
): boolean | Promise<boolean> {
  const path = manifest ? requestPath(req.url) : null;
  if (!manifest || path === null || isPrivatePath(path) || isRulesFile(path)) return false;
  const known = s.preparedFiles.get(manifest)?.[200].get(path);
  const match = known ? null : fileAt(manifest.files, path);
  if (!known && !match) return false;
  const sent = sendFile(s, req, res, target.deploymentId, known ?? prepared(s, manifest, match!), counter);
  return sent ? sent.then(() => true) : true;
}
