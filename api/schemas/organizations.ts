import { z } from 'zod';
import { id, PageQuery, Slug, Timestamp } from './common.ts';

/** An organization's plan; it sets the rate limit of its members' tokens. */
export const Plan = z.enum(['free', 'pro', 'enterprise']);
export type Plan = z.infer<typeof Plan>;
/** Roles in an organization, strongest first. */
export const Role = z.enum(['owner', 'admin', 'developer', 'viewer']);
export type Role = z.infer<typeof Role>;

export const Organization = z.object({
  /** `org_` identifier. */
  id: id('org'),
  /** Host-name-safe name, unique across the service. */
  name: z.string(),
  /** Name shown to people. */
  displayName: z.string(),
  /** `free`, `pro` or `enterprise`. */
  plan: Plan,
  /** Members whose user exists (`active`); pending invitations are not counted. */
  memberCount: z.number().int(),
  /** Projects that are not deleted. */
  projectCount: z.number().int(),
  /** True for the organization every user gets on creation (extension). */
  personal: z.boolean(),
  createdAt: Timestamp,
  /** The caller's role in it (extension). */
  role: Role,
});
export type Organization = z.infer<typeof Organization>;

/** Bytes an organization keeps of one resource its plan bounds, and the bound. */
export const QuotaUsage = z.object({
  /** Bytes kept now. */
  usedBytes: z.number().int(),
  /** The plan's quota in bytes. */
  limitBytes: z.number().int(),
});
export type QuotaUsage = z.infer<typeof QuotaUsage>;

/** `GET /v1/organizations/<id>/usage` (extension): what the organization keeps against its plan's quotas. */
export const OrganizationUsage = z.object({
  /** The plan whose quotas apply. */
  plan: Plan,
  /** Uploaded files kept (each distinct file the organization uploaded, until it expires); past it, uploads answer 413 QUOTA_EXCEEDED. */
  storage: QuotaUsage,
  /** Build caches of all its projects together; past it, saving a cache evicts the oldest. */
  buildCaches: QuotaUsage,
});
export type OrganizationUsage = z.infer<typeof OrganizationUsage>;

const DisplayName = z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters');

export const CreateOrganizationBody = z.strictObject({
  /** 1-63 lowercase letters, digits, hyphens; unique across the service. */
  name: Slug,
  /** Name shown to people; defaults to `name`. */
  displayName: DisplayName.optional(),
  /** Default: the server's default plan for new organizations (`free` unless its operator set SLIPWAY_DEFAULT_PLAN). */
  plan: Plan.optional(),
});
export type CreateOrganizationBody = z.infer<typeof CreateOrganizationBody>;

export const UpdateOrganizationBody = z
  .strictObject({
    /** New name, unique across the service. */
    name: Slug.optional(),
    /** New display name. */
    displayName: DisplayName.optional(),
    /** New plan. */
    plan: Plan.optional(),
  })
  .refine((b) => Object.keys(b).length > 0, {
    message: 'must change at least one of name, displayName, plan',
    // An unknown field is reported on its own, not also as "nothing to change".
    when: (payload) => payload.issues.length === 0,
  });
export type UpdateOrganizationBody = z.infer<typeof UpdateOrganizationBody>;

/** An e-mail address, compared in lower case. */
export const Email = z
  .string()
  .trim()
  .max(320, 'must be at most 320 characters')
  .pipe(z.email('must be an e-mail address'))
  .transform((e) => e.toLowerCase());

export const Member = z.object({
  /** The member's e-mail address (lower case); it identifies the member in paths. */
  email: z.string(),
  /** `owner`, `admin`, `developer` or `viewer`. */
  role: Role,
  /** `active` once the user exists, else `invited`. */
  status: z.enum(['active', 'invited']),
  /** When the membership was created. */
  invitedAt: Timestamp,
  /** When the membership took effect; `null` while invited. */
  joinedAt: Timestamp.nullable(),
});
export type Member = z.infer<typeof Member>;

export const InviteMemberBody = z.strictObject({
  /** Who to invite; a user with this e-mail becomes active at once. */
  email: Email,
  /** Default `developer`; only an owner may invite an owner. */
  role: Role.default('developer'),
});
export type InviteMemberBody = z.infer<typeof InviteMemberBody>;

export const UpdateMemberBody = z.strictObject({
  /** The new role; only an owner may grant or take away `owner`. */
  role: Role,
});
export type UpdateMemberBody = z.infer<typeof UpdateMemberBody>;

export const OrganizationParams = z.object({
  /** Organization id (`org_...`) or name. */
  orgId: z.string().min(1),
});

export const MemberParams = OrganizationParams.extend({
  /** The member's e-mail address (URL-encoded in the path). */
  email: Email,
});

/** `page` and `limit` of the organization and member lists. */
export const ListOrganizationsQuery = PageQuery;
