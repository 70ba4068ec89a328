import type { Actor } from '../../registry/editor.js';

/** Who the audit trail names for a change made through the admin API (its one token). */
export const ADMIN_ACTOR: Actor = { id: 'admin-token', via: 'admin', userId: null };
