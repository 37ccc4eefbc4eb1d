import type { PageQuery } from '../schemas/common.ts';
import type { ListDeploymentsQuery, LogType } from '../schemas/deployments.ts';
import type { ListEnvQuery, ExportEnvQuery, EnvEnvironment } from '../schemas/env.ts';
import type { AlertsQuery, MetricSeriesQuery, MetricsQuery } from '../schemas/monitoring.ts';
import type { ListProjectsQuery } from '../schemas/projects.ts';

// Query inputs are the parsed query types with every field optional: the server fills defaults.

/** `page` (1-based) and `limit` (1 to 100) of a list. */
export type PageInput = Partial<PageQuery>;
/** Filters of `GET /v1/projects`. */
export type ProjectsQueryInput = Partial<ListProjectsQuery>;
/** Filters of `GET /v1/projects/<id>/deployments`. */
export type DeploymentsQueryInput = Partial<ListDeploymentsQuery>;
/** Filters of `GET /v1/projects/<id>/env`. */
export type EnvListQueryInput = Partial<ListEnvQuery>;
/** Filters of `GET /v1/projects/<id>/alerts`. */
export type AlertsQueryInput = Partial<AlertsQuery>;
/** `period` and `metric` of `GET /v1/projects/<id>/metrics`. */
export type MetricsQueryInput = Partial<MetricsQuery>;
/** `period` of `GET /v1/projects/<id>/metrics/series`. */
export type MetricSeriesQueryInput = Partial<MetricSeriesQuery>;
/** `?environment=` of PATCH and DELETE `/env/<key>`. */
export interface EnvSelectorInput {
  environment?: EnvEnvironment;
}
/** `format` and `environment` of `GET /v1/projects/<id>/env/export`. */
export type ExportQueryInput = Partial<ExportEnvQuery>;
/** `type` and `tail` of `GET /v1/deployments/<id>/logs`. */
export interface LogsQueryInput {
  type?: LogType;
  tail?: number;
}
