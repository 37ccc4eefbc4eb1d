import type { Migration } from 'kysely';
import type { Cipher } from '../../../core/secrets.ts';
import type { DialectHelpers } from '../dialect.ts';
import { initial } from './001_initial.ts';
import { deploymentRuntime } from './002_deployment_runtime.ts';
import { payments } from './003_payments.ts';
import { webhookDeliveriesDue } from './004_webhook_deliveries_due.ts';
import { certificatesAndRuntimeSamples } from './005_certificates_and_runtime_samples.ts';
import { secretsAtRest } from './006_secrets_at_rest.ts';
import { domainClaims } from './007_domain_claims.ts';
import { uploads } from './008_uploads.ts';
import { buildSettings } from './009_build_settings.ts';
import { buildCache } from './010_build_cache.ts';
import { dashboardSessions } from './011_dashboard_sessions.ts';
import { githubEvents } from './012_github_events.ts';
import { trustPolicies } from './013_trust_policies.ts';
import { listIndexes } from './014_list_indexes.ts';
import { metricRollups } from './015_metric_rollups.ts';
import { monitoringIndexes } from './016_monitoring_indexes.ts';
import { rateLimitGranted } from './017_rate_limit_granted.ts';
import { buildSpec } from './018_build_spec.ts';
import { usedOidcTokens } from './019_used_oidc_tokens.ts';
import { githubEventDigests } from './020_github_event_digests.ts';
import { fairJobs } from './021_fair_jobs.ts';
import { uploadBytes } from './022_upload_bytes.ts';
import { deployHooks } from './023_deploy_hooks.ts';
import { branchAliases } from './024_branch_aliases.ts';
import { previewProtection } from './025_preview_protection.ts';
import { listCounts } from './026_list_counts.ts';
import { detectedFramework } from './028_detected_framework.ts';
import { condemnedBlobs } from './027_condemned_blobs.ts';
import { orderedJobs } from './029_ordered_jobs.ts';
import { webhookDeliveriesAsJobs } from './031_webhook_deliveries_as_jobs.ts';
import { githubEventsAsJobs } from './030_github_events_as_jobs.ts';

/** Every migration in order; names sort as they run. Data migrations that encrypt use `cipher`. */
export function allMigrations(d: DialectHelpers, cipher: Cipher): Record<string, Migration> {
  return {
    '001_initial': initial(d),
    '002_deployment_runtime': deploymentRuntime,
    '003_payments': payments,
    '004_webhook_deliveries_due': webhookDeliveriesDue,
    '005_certificates_and_runtime_samples': certificatesAndRuntimeSamples,
    '006_secrets_at_rest': secretsAtRest(d, cipher),
    '007_domain_claims': domainClaims(d),
    '008_uploads': uploads,
    '009_build_settings': buildSettings,
    '010_build_cache': buildCache,
    '011_dashboard_sessions': dashboardSessions,
    '012_github_events': githubEvents(d),
    '013_trust_policies': trustPolicies,
    '014_list_indexes': listIndexes,
    '015_metric_rollups': metricRollups,
    '016_monitoring_indexes': monitoringIndexes,
    '017_rate_limit_granted': rateLimitGranted,
    '018_build_spec': buildSpec,
    '019_used_oidc_tokens': usedOidcTokens,
    '020_github_event_digests': githubEventDigests,
    '021_fair_jobs': fairJobs,
    '022_upload_bytes': uploadBytes,
    '023_deploy_hooks': deployHooks,
    '024_branch_aliases': branchAliases,
    '025_preview_protection': previewProtection,
    '026_list_counts': listCounts(d),
    '027_condemned_blobs': condemnedBlobs,
    '028_detected_framework': detectedFramework,
    '029_ordered_jobs': orderedJobs(d),
    '030_github_events_as_jobs': githubEventsAsJobs(d),
    '031_webhook_deliveries_as_jobs': webhookDeliveriesAsJobs(d),
  };
}
