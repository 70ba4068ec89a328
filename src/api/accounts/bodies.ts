import { z } from 'zod';
import { uniqueItems } from '../../domain/lists.js';
import { boundedString, storedName } from '../../domain/text.js';
import { CALL_LOG_MODES } from '../../domain/vocabulary.js';

/** The bodies the admin API takes for an account's roles and a family's call-log mode. */

export const rolesRequestSchema = z.strictObject({
  admin: z.boolean({ error: 'must be true or false' }),
  operators: uniqueItems(z.array(storedName(boundedString(64).min(1))).max(1000), 'operator'),
  originators: uniqueItems(z.array(storedName(boundedString(64).min(1))).max(1000), 'originator'),
});

export const callLogModeSchema = z.strictObject({
  call_log_mode: z.enum(CALL_LOG_MODES, { error: `must be one of ${CALL_LOG_MODES.join(', ')}` }),
});
