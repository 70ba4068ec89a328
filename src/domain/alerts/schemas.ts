import { z } from 'zod';
import { boundedString, emailAddress } from '../text.js';
import { FUELLING_OPTIONS } from '../vocabulary.js';
import { ALERT_LANGUAGES } from './words.js';

/**
 * The driver alerts' request and its answer (`POST /map/v1/alerts`, docs/alerts.md): the schemas are
 * the contract, checked by the route and turned into the export v2 document's description of it.
 */

export const alertRequestSchema = z
  .strictObject({
    hrs_id: boundedString(16, 'must be a station id as the map gives it').regex(/^[A-Z0-9]{1,16}$/, 'must be a station id as the map gives it').meta({ description: 'The station, as the map names it.', examples: ['BERLA'] }),
    fuelling_option: z.enum(FUELLING_OPTIONS).meta({ description: 'The fuelling option the alert watches.', examples: ['700ld'] }),
    when: z.enum(['available', 'unavailable']).meta({
      description: '`available`: one e-mail each time the option becomes available (AVAILABLE or LIMITEDLY_AVAILABLE) after it was not; `unavailable`: each time it goes down (UNAVAILABLE).',
    }),
    email: emailAddress().meta({ description: 'Where the e-mails go: kept only while the alert lives.', examples: ['driver@example.org'] }),
    language: z.enum(ALERT_LANGUAGES).default('en').meta({ description: 'The e-mails\' and pages\' language.' }),
  })
  .meta({
    title: 'AlertRequest',
    description: 'A driver alert asked for from the map.',
    examples: [{ hrs_id: 'BERLA', fuelling_option: '700ld', when: 'available', email: 'driver@example.org', language: 'de' }],
  });

export const alertAcceptedSchema = z
  .strictObject({
    status: z.literal('confirmation_sent'),
    detail: z.string(),
    confirm_within_seconds: z.int().positive(),
  })
  .meta({ title: 'AlertAccepted', description: 'The confirmation e-mail is on its way.' });

