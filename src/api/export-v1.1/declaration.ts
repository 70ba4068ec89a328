import { PROBLEM_ERRORS } from '../../http/errors.js';
import type { ReferenceDeclaration } from '../reference.js';

/** export v1.1: the legacy export API with fuelling options, vehicle types and the five-state summary (export v1/v1.1 tokens). */
export const EXPORT_V11: ReferenceDeclaration = {
  name: 'export_v1.1',
  prefix: '/v1.1/',
  label: 'export v1.1',
  accepts: 'export_v1',
  sandbox: true,
  errors: PROBLEM_ERRORS,
};
