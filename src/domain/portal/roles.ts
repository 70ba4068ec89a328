/**
 * Who may do what in the portal. An account may be an admin, staff of operators and manager of
 * originators, in any combination (admins set them: `PUT /admin/v1/users/{id}/roles`). Operator staff
 * see and change their operators' stations (record, layout, events, photo, assignments, audit trail);
 * originator managers see and change their originators (import tokens, stations and assignments they
 * report on, call logs); an admin may do everything either may. A denial says what is missing.
 */

export interface Roles {
  admin: boolean;
  operators: ReadonlySet<string>;
  originators: ReadonlySet<string>;
}

export const NO_ROLES: Roles = { admin: false, operators: new Set(), originators: new Set() };

/** Why the account may not act for this operator's station, or undefined when it may. */
export function operatorDenial(roles: Roles, operatorId: string, what: string): string | undefined {
  if (roles.admin || roles.operators.has(operatorId)) return undefined;
  return `${what} needs staff membership of the operator "${operatorId}" (or the admin role); this account has neither. An admin grants memberships.`;
}

/** Why the account may not act for this originator, or undefined when it may. */
export function originatorDenial(roles: Roles, originatorId: string): string | undefined {
  if (roles.admin || roles.originators.has(originatorId)) return undefined;
  return `This needs manager membership of the originator "${originatorId}" (or the admin role); this account has neither. An admin grants memberships.`;
}

/** Why the account may not use an admin-only portal request. */
export function adminDenial(roles: Roles): string | undefined {
  return roles.admin ? undefined : 'This needs the admin role; this account does not have it.';
}
