import { DRF_ERRORS } from '../../http/errors.js';
import type { Family } from '../../http/family.js';
import { adminAuth } from '../auth.js';
import { invalidInput } from '../accounts/input.js';

/**
 * The admin API in one place: paths under `/admin/`, the `ADMIN_TOKEN` (unset: every admin request is
 * refused), the import APIs' error bodies, no licence, CORS or rate limit. A body that does not fit its
 * route's schema is refused as the portal refuses one (400 `invalid_body` naming each field).
 */
export function adminFamily(adminToken: string | undefined): Family {
  return { name: 'admin', prefix: '/admin/', auth: adminAuth(adminToken), errors: DRF_ERRORS, invalid: invalidInput };
}
