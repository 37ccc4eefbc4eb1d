import type { StepResult } from './step.ts';

/** Every output, in action.yml's order. */
export const OUTPUT_NAMES = [
  'deployment-id',
  'url',
  'branch-url',
  'status',
  'target',
  'project-id',
  'production-url',
  'rollback-from',
] as const;
export type OutputName = (typeof OUTPUT_NAMES)[number];

/**
 * The step's outputs. They describe the last deployment the step created or promoted: after a
 * rollback (asked for, or automatic after a failed health check) that is the rollback, and
 * `rollback-from` names the deployment production left. Unknown values are empty strings.
 */
export function outputsOf(result: StepResult): Record<OutputName, string> {
  const d = result.deployment;
  return {
    'deployment-id': d?.id ?? '',
    url: d?.url ?? '',
    'branch-url': d?.branchUrl ?? '',
    status: d?.status ?? '',
    target: d?.target ?? '',
    'project-id': result.project.id,
    'production-url': result.productionUrl ?? '',
    'rollback-from': result.rollbackFrom ?? '',
  };
}
