import type { ReferenceData } from '../../../db/queries/reference.js';
import type { Config } from '../../config/config.js';

/**
 * What the families' document definitions take from the running service, besides its version: the
 * limits they state and the reference data their examples show. The HTTP core passes the context
 * through unread (DocContext in src/http/openapi.ts); this adds to its type what this service hands.
 */
declare module '../../http/openapi.js' {
  interface DocContext {
    config: Pick<
      Config,
      | 'importV1RateLimit'
      | 'importV2RateLimit'
      | 'exportV1RateLimit'
      | 'sandbox'
      | 'sandboxRateLimit'
      | 'exportV2RateLimitMinute'
      | 'exportV2RateLimitDay'
      | 'exportV2RateLimitDayWindowSeconds'
      | 'maxBodyBytes'
      | 'pushStreamsPerUser'
      | 'pushAuthTimeoutMs'
      | 'pushMaxBacklogBytes'
      | 'pushMaxAgeSeconds'
      | 'portalSessionIdleMs'
      | 'portalSessionMaxMs'
      | 'revealLinkTtlMs'
      | 'tokenReminderOffsetsMs'
      | 'deletedRetentionDays'
      | 'webhookTimeoutMs'
      | 'webhookGiveUpAfterMs'
      | 'webhookSecretOverlapMs'
    >;
    reference: ReferenceData;
  }
}
