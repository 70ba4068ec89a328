import { responseRef, schemaRef, type DocContext } from '../../../http/openapi.js';

/** What the export v2 document's parts share: the security scheme's name, problem responses, the limits in words. */

export const SECURITY = 'exportV2Token';
const PROBLEM = 'application/problem+json';

type Examples = Record<string, { summary?: string; value: unknown }>;

/** A response with a problem details body (RFC 9457) and its examples. */
export const problem = (description: string, examples: Examples, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { [PROBLEM]: { schema: schemaRef('Problem'), examples } },
});

export const problemBody = (status: number, title: string, code: string, detail: string) => ({ type: 'about:blank', title, status, detail, code });

/** The responses every authenticated export v2 operation can give besides its own. */
export const COMMON = {
  '401': responseRef('Unauthorized'),
  '429': responseRef('TooManyRequests'),
  '500': responseRef('InternalError'),
};

/** The per-user rate limits as configured: the burst per minute and the sustained one in words. */
export function rateLimits(config: DocContext['config']): { perMinute: number; sustained: string } {
  const { exportV2RateLimitMinute: perMinute, exportV2RateLimitDay: perDay, exportV2RateLimitDayWindowSeconds: dayWindow } = config;
  return { perMinute, sustained: `${perDay} requests per ${windowText(dayWindow)}` };
}

function windowText(seconds: number): string {
  if (seconds === 86_400) return 'day';
  if (seconds % 3600 === 0) return `${seconds / 3600} hours`;
  return `${seconds} seconds`;
}
