import { Billing, BillingQuery } from '../schemas/billing.ts';
import { OrganizationParams } from '../schemas/organizations.ts';
import { contract } from './contract.ts';

export const billing = {
  get: contract({
    method: 'GET',
    url: '/v1/organizations/:orgId/billing',
    tag: 'billing',
    summary: 'Prepaid balance of the organization and its charges (newest first, paginated)',
    params: OrganizationParams,
    query: BillingQuery,
    response: Billing,
  }),
};
