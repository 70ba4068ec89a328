import { DRF_ERRORS, PROBLEM_ERRORS } from '../http/errors.js';
import type { Family } from '../http/family.js';

/**
 * Paths no API family claims, as families of public routes only: the root (health, unknown paths),
 * answered with problem bodies; and `/import/…` outside every import generation, answered in the
 * import APIs' format like each of them.
 */
export const ROOT_AREA: Family = { name: 'root', prefix: '/', errors: PROBLEM_ERRORS };
export const IMPORT_AREA: Family = { name: 'import', prefix: '/import/', errors: DRF_ERRORS };
