import { responseRef, schemaRef } from '../../../http/openapi.js';

/** What the export v1 / v1.1 documents' parts share: the security scheme's name, problem responses. */

export const SECURITY = 'exportV1Token';
const PROBLEM = 'application/problem+json';

type Examples = Record<string, { summary?: string; value: unknown }>;

/** A response with a problem details body (RFC 9457) and its examples. */
export const problem = (description: string, examples: Examples, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { [PROBLEM]: { schema: schemaRef('Problem'), examples } },
});

export const problemBody = (status: number, title: string, code: string, detail: string) => ({ type: 'about:blank', title, status, detail, code });

/** The responses every authenticated export v1 / v1.1 operation can give besides its own. */
export const COMMON = {
  '401': responseRef('Unauthorized'),
  '429': responseRef('TooManyRequests'),
  '500': responseRef('InternalError'),
};

export const unknownStation = (hrsId = 'OSLO1') => problemBody(404, 'Not Found', 'not_found', `No station with hrs_id "${hrsId}".`);
