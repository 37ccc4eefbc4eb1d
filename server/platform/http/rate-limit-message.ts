import type { Config } from '../config.ts';
import type { PlanName } from '../../core/plan-limits.ts';

/**
 * The words of a 429: the limit, the plan it comes from, when to retry, and how to get more,
 * true for whoever reads it (a script on the API, or `slipway deploy`) and for who may act on it
 * (an organization's admins, or only the operator: SLIPWAY_PLAN_CHANGES).
 */
export function rateLimitMessage(
  config: Pick<Config, 'planChanges' | 'enterpriseRateLimit'>,
  plan: PlanName,
  limit: number,
  waitSeconds: number,
): string {
  const head = `Rate limit of ${limit} requests per hour exceeded (the best plan among your organizations is ${plan}); retry in ${waitSeconds} seconds.`;
  const more = 'See docs/api/auth.md#rate-limits.';
  if (plan === 'enterprise') {
    return `${head} The enterprise limit is the operator's setting SLIPWAY_ENTERPRISE_RATE_LIMIT (now ${config.enterpriseRateLimit}). ${more}`;
  }
  const next = plan === 'free' ? 'pro' : 'enterprise';
  const allows = next === 'pro' ? '1000' : `${config.enterpriseRateLimit}`;
  const howToAsk =
    config.planChanges === 'members'
      ? `an admin of it sends PATCH /v1/organizations/<id> {"plan":"${next}"}, or the operator runs \`slipway org plan <org> ${next}\``
      : `the operator of this service runs \`slipway org plan <org> ${next}\` (or sets SLIPWAY_DEFAULT_PLAN for new organizations)`;
  return `${head} Plan ${next} allows ${allows} an hour: to put one of your organizations on it, ${howToAsk}. ${more}`;
}
