import { jwtVerify, type JWTPayload } from 'jose';
import picomatch from 'picomatch';
import { ApiError } from '../../../../api/errors.ts';
import type { ExchangedToken } from '../../../../api/schemas/trust-policies.ts';
import type { TrustPoliciesTable } from '../../../platform/store/schema.ts';
import type { Deps } from '../../../platform/deps/deps.ts';
import { createToken } from '../users/create-token.ts';
import { requirePolicyAuthor } from './policy-author.ts';
import { claimJti, jtiOf, OIDC_CLOCK_TOLERANCE_S } from './used-tokens.ts';
import { parseList } from './policies.ts';

/** The claims of a GitHub Actions OIDC token that a policy looks at. */
interface ActionsClaims extends JWTPayload {
  repository?: string;
  repository_id?: string;
  ref?: string;
  environment?: string;
  event_name?: string;
  job_workflow_ref?: string;
  workflow_ref?: string;
}

const refused = (message: string) => new ApiError('UNAUTHORIZED', `OIDC token refused: ${message}`);

/** Checks the token's signature (the issuer's keys), issuer, audience and times, naming what failed. */
async function verify(deps: Deps, token: string): Promise<ActionsClaims> {
  const { issuer, audience } = deps.config.oidc;
  try {
    const { payload } = await jwtVerify<ActionsClaims>(token, deps.oidcKeys, {
      issuer,
      audience,
      algorithms: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'PS256'],
      clockTolerance: OIDC_CLOCK_TOLERANCE_S,
      // jti: each token is exchanged once (used-tokens.ts); GitHub sets it on every token.
      requiredClaims: ['exp', 'iat', 'jti', 'repository', 'repository_id', 'ref'],
    });
    return payload;
  } catch (err) {
    const e = err as { code?: string; claim?: string; reason?: string; message?: string };
    switch (e.code) {
      case 'ERR_JWT_EXPIRED':
        throw refused('it has expired (exp): ask for a new one in the job');
      case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
        if (e.claim === 'aud')
          throw refused(`its audience (aud) is not ${audience}: request it with that audience`);
        if (e.claim === 'iss') throw refused(`its issuer (iss) is not ${issuer}`);
        if (e.claim === 'nbf' || e.claim === 'iat') throw refused(`it is not valid yet (${e.claim})`);
        throw refused(`its ${e.claim} claim ${e.reason === 'missing' ? 'is missing' : 'is not valid'}`);
      case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
        throw refused('its signature does not verify with the issuer’s keys');
      case 'ERR_JWKS_NO_MATCHING_KEY':
        throw refused('the issuer has no key with its key id (kid)');
      case 'ERR_JOSE_ALG_NOT_ALLOWED':
        throw refused('its algorithm (alg) is not allowed');
      case 'ERR_JWKS_TIMEOUT':
      case 'ERR_JOSE_GENERIC':
        deps.log.warn({ err }, 'could not read the OIDC issuer’s keys');
        throw new ApiError(
          'SERVICE_UNAVAILABLE',
          `Could not read the keys of the OIDC issuer ${issuer}; try again`,
        );
      default:
        throw refused(`it is not a signed JWT (${e.code ?? 'malformed'})`);
    }
  }
}

/** `owner/repo/.github/workflows/deploy.yml@refs/heads/main` -> `.github/workflows/deploy.yml`. */
const workflowPath = (ref: string | undefined) => ref?.split('@')[0]?.split('/').slice(2).join('/');

/** Why a policy does not trust these claims, or null when it does. */
export function mismatch(policy: TrustPoliciesTable, c: ActionsClaims): string | null {
  if (String(c.repository_id) !== policy.repository_id) {
    return `repository_id ${String(c.repository_id)} is not the policy's ${policy.repository_id} (a renamed or re-created repository is not trusted)`;
  }
  if (c.repository?.toLowerCase() !== policy.repository) {
    return `repository ${String(c.repository)} is not the policy's ${policy.repository}`;
  }
  const refs = parseList(policy.refs, `Trust policy ${policy.id}'s refs`);
  if (refs && !refs.some((glob) => picomatch.isMatch(c.ref ?? '', glob))) {
    return `ref ${String(c.ref)} matches none of ${refs.join(', ')}`;
  }
  const environments = parseList(policy.environments, `Trust policy ${policy.id}'s environments`);
  if (environments && !environments.includes(c.environment ?? '')) {
    return c.environment
      ? `environment ${c.environment} is not one of ${environments.join(', ')}`
      : `the job runs in no environment; the policy needs one of ${environments.join(', ')}`;
  }
  if (policy.workflow) {
    const workflow = workflowPath(c.job_workflow_ref) ?? workflowPath(c.workflow_ref);
    if (workflow !== policy.workflow)
      return `workflow ${String(workflow)} is not the policy's ${policy.workflow}`;
  }
  const events = parseList(policy.events, `Trust policy ${policy.id}'s events`);
  if (events && !events.includes(c.event_name ?? '')) {
    return `event ${String(c.event_name)} is not one of ${events.join(', ')}`;
  }
  return null;
}

/**
 * `POST /v1/oidc/token`: a GitHub Actions OIDC token for a short-lived Slipway token, scoped to one
 * project and the trusting policy's role, acting as the admin who made the policy. The token sent
 * is never echoed; a refusal says which check failed. Each OIDC token is exchanged once: its
 * `jti` is kept until it expires, and a second exchange is refused (as PyPI's trusted publishing
 * does), so a job token that leaks from a log or a proxy after use is worth nothing.
 */
export async function exchangeOidcToken(
  deps: Deps,
  body: { token: string; project?: string | undefined },
): Promise<ExchangedToken> {
  const claims = await verify(deps, body.token);
  const jti = jtiOf(claims);
  let query = deps.db
    .selectFrom('trust_policies as t')
    .innerJoin('projects as p', 'p.id', 't.project_id')
    .selectAll('t')
    .select(['p.name as project_name', 'p.organization_id'])
    .where('p.deleted_at', 'is', null);
  if (body.project) {
    query = body.project.startsWith('prj_')
      ? query.where('p.id', '=', body.project)
      : query.where('p.name', '=', body.project);
  } else {
    query = query.where('t.repository_id', '=', String(claims.repository_id));
  }
  const policies = await query.orderBy('t.created_at').execute();
  // Any GitHub repository can mint a token for this audience: until the job proves it is of a
  // trusted repository, the answer tells nothing about projects or their policies.
  const untrusted = () =>
    new ApiError(
      'FORBIDDEN',
      `No trust policy${body.project ? ` of project ${body.project}` : ''} accepts jobs of ${String(claims.repository)} (repository_id ${String(claims.repository_id)}): an admin of the project adds one (POST /v1/projects/<id>/trust-policies)`,
    );
  const ofRepository = policies.filter((p) => p.repository_id === String(claims.repository_id));
  if (ofRepository.length === 0) throw untrusted();
  const projects = new Set(ofRepository.map((p) => p.project_id));
  if (projects.size > 1) {
    throw new ApiError(
      'CONFLICT',
      `Several projects trust ${String(claims.repository)}: name the project (its id)`,
    );
  }
  // The job is of a trusted repository: it may learn what its policy asks.
  const reasons = ofRepository.map((p) => ({ p, why: mismatch(p, claims) }));
  const trusted = reasons.find((r) => r.why === null);
  if (!trusted) {
    const first = reasons[0]!;
    throw new ApiError(
      'FORBIDDEN',
      `No trust policy of project ${first.p.project_name} accepts this job: ${first.why!}`,
    );
  }
  const policy = trusted.p;
  await requirePolicyAuthor(deps, policy, {
    name: policy.project_name,
    organizationId: policy.organization_id,
  });
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + deps.config.oidc.tokenTtlMs).toISOString();
  // The token and the mark that its job token is used commit together: a replay, even at the same
  // moment on another process, gets no token, and a failed exchange leaves the job token unused.
  const made = await deps.db.transaction().execute(async (tx) => {
    const token = await createToken(
      { ...deps, db: tx },
      policy.created_by,
      `github-actions: ${String(claims.repository)}@${String(claims.ref)}`,
      { projectId: policy.project_id, role: policy.role, expiresAt },
    );
    await claimJti(tx, { jti, exp: claims.exp!, usedAt: now, tokenId: token.id });
    return token;
  });
  return { token: made.token, projectId: policy.project_id, role: policy.role, expiresAt };
}
