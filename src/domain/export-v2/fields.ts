import { z } from 'zod';
import { HRS_ID_PATTERN } from '../vocabulary.js';

/** The fields both halves of export v2's bodies use: the status (./schemas.ts) and the station records (./stations.ts). */

export const hrsIdSchema = z
  .string()
  .regex(HRS_ID_PATTERN)
  .meta({ description: 'Station id: five uppercase letters.', examples: ['BERLA'] });

export const instant = (description: string) =>
  z.iso.datetime({ offset: true }).meta({ description, examples: ['2026-11-22T10:00:00.000Z'] });
