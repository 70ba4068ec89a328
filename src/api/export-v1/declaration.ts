import { PROBLEM_ERRORS } from '../../http/errors.js';
import { deprecatedPolicy } from '../deprecation.js';
import type { ReferenceDeclaration } from '../reference.js';

/** export v1: the legacy export API (export v1/v1.1 tokens), deprecated: every response says so and links v1.1's reference. */
export const EXPORT_V1: ReferenceDeclaration = {
  name: 'export_v1',
  prefix: '/v1/',
  label: 'export v1',
  accepts: 'export_v1',
  errors: PROBLEM_ERRORS,
  policy: deprecatedPolicy('/v1.1/doc/'),
};
