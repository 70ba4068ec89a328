/**
 * Limits the spec leaves open, so that one request cannot hold the server: transmissions per request
 * (at most one per station, so this is also stations per request), entries per list of one
 * transmission (nozzles, storages, products), nesting of the JSON body, and the error messages
 * reported for one request, after which the remaining transmissions are not validated.
 */
export const LIMITS = { transmissions: 1000, entries: 100, reportedErrors: 1000, depth: 16 } as const;

export const LIMIT_MESSAGES = {
  tooLong: (max: number) => `Ensure this field has no more than ${max} elements.`,
  notValidated: `Not validated: the request has more than ${LIMITS.reportedErrors} errors; fix those reported first.`,
} as const;
