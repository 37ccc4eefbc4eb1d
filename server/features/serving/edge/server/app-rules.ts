import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnswerShaper } from '../proxy.ts';
import type { Target } from '../resolve-host.ts';
import { sendRedirect } from '../send-redirect.ts';
import { requestPath, type ByteCounter } from '../static.ts';
import { applyHeaderRules } from '../../../../platform/routing/apply-headers.ts';
import { NO_RULES, type HeaderMatch, type RoutingRules } from '../../../../platform/routing/match-rules.ts';
import { rulesArtifactOf, rulesFolderOf } from '../../../../platform/routing/rules-folder.ts';
import type { EdgeContext } from './context.ts';
import { toTarget } from './to-app.ts';

/** For server apps' `_redirects`: no file of theirs is served by the edge, so none shadows a rule. */
const noFiles = () => false;

/** Applies `_headers` to an app's answer, and a `_redirects` 404 rule to its status (a 200 becomes 404). */
function shaperFor(headerRules: readonly HeaderMatch[] | null, notFound: boolean): AnswerShaper {
  return (status, headers) => {
    if (headerRules) applyHeaderRules(headers, headerRules);
    return notFound && status === 200 ? 404 : status;
  };
}

/** A resolved target's request, once any protection let it through. */
export function serveTarget(
  edge: EdgeContext,
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  counter: ByteCounter,
): void | Promise<void> {
  // A server app's rules are applied here, before it is started (a redirect never wakes
  // it); a static site's by the static server, which knows its files.
  if (target.kind === 'node' && target.artifactId) {
    const rules = appRules(edge, target, rulesArtifactOf(target));
    if (rules === NO_RULES) return toServer(edge, req, res, target, counter);
    return rules instanceof Promise
      ? rules.then((x) => routeToApp(edge, req, res, target, x, counter))
      : routeToApp(edge, req, res, target, rules, counter);
  }
  return toTarget(edge, req, res, target, counter);
}

/** A server app's routing rules, read from its artifact (see rulesFolderOf). */
function appRules(
  edge: EdgeContext,
  target: Target,
  artifactId: string,
): RoutingRules | Promise<RoutingRules> {
  const { artifacts } = edge;
  const folder = rulesFolderOf(target);
  const manifest = artifacts.peek(artifactId);
  if (manifest) return artifacts.routingRules(manifest, folder);
  return artifacts.manifest(artifactId).then((m) => (m ? artifacts.routingRules(m, folder) : NO_RULES));
}

/**
 * A server app's request by its `_redirects` and `_headers`: a redirect is answered here without
 * the app; a rewrite goes to the app with the target's path (a 404 rule turns the app's 200 into
 * a 404); the matching headers are applied to the app's answer. No file shadows a rule: the
 * edge serves none of a server app's files.
 */
function routeToApp(
  edge: EdgeContext,
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  rules: RoutingRules,
  counter: ByteCounter,
): void | Promise<void> {
  const path = requestPath(req.url);
  // A path that does not decode is the app's to answer, as without rules.
  if (path === null) return toServer(edge, req, res, target, counter);
  const answer = rules.redirect(path, req.url ?? '/', noFiles);
  const headerRules = rules.headers(path);
  if (answer?.kind === 'redirect') {
    counter.bytes += sendRedirect(req, res, target.deploymentId, answer, headerRules);
    return;
  }
  if (answer) req.url = answer.url;
  const notFound = answer?.status === 404;
  if (!headerRules && !notFound) return toServer(edge, req, res, target, counter);
  return toServer(edge, req, res, target, counter, shaperFor(headerRules, notFound));
}

/**
 * A server app's request that no rule answered: a static asset of its, at exactly its path,
 * is the edge's to answer (the app is not woken for it); anything else goes to the app.
 */
function toServer(
  edge: EdgeContext,
  req: IncomingMessage,
  res: ServerResponse,
  target: Target,
  counter: ByteCounter,
  shape?: AnswerShaper,
): void | Promise<void> {
  if (!target.assetsArtifactId) return toTarget(edge, req, res, target, counter, shape);
  const asset = edge.files.serveAsset(req, res, target, counter);
  if (asset === true) return;
  if (asset === false) return toTarget(edge, req, res, target, counter, shape);
  return asset.then((sent) => (sent ? undefined : toTarget(edge, req, res, target, counter, shape)));
}
