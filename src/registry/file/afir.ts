import { createRequire } from 'node:module';
import { z } from 'zod';
import { uniqueItems } from '../../domain/lists.js';
import { VEHICLE_CATEGORIES } from '../../domain/vocabulary.js';
import { boundedString, emailAddress } from '../../domain/text.js';

/**
 * A station's static (AFIR) details in a registry file: exported as given on export v1.1 and v2, and
 * checked at load where the dataset says what a field is. Fields outside the dataset pass unchanged;
 * every field is optional. Each problem names its JSON path.
 */

const coordinates = z.strictObject({
  lat: z.number({ error: 'must be a number' }).min(-90, 'must be from -90 to 90').max(90, 'must be from -90 to 90'),
  lon: z.number({ error: 'must be a number' }).min(-180, 'must be from -180 to 180').max(180, 'must be from -180 to 180'),
});

const text = boundedString(2000, 'must be at most 2000 characters', { error: 'must be a string' }).min(1, 'must not be empty');
/** A list of texts, each at most once (src/domain/lists.ts). */
const texts = (what: string) => uniqueItems(z.array(text, { error: 'must be a list of strings' }), what);
const measure = (unit: string) => z.number({ error: `must be a number (${unit})` }).positive(`must be more than 0 (${unit})`);
const count = z.number({ error: 'must be a whole number' }).int('must be a whole number').min(0, 'must be 0 or more');

const require = createRequire(import.meta.url);
/** libphonenumber-js, loaded with the first phone number read, not by every process that imports the registry (60 ms at its start). */
let phoneNumbers: typeof import('libphonenumber-js') | undefined;
const parsePhoneNumberWithError = (text: string) => (phoneNumbers ??= require('libphonenumber-js') as typeof import('libphonenumber-js')).parsePhoneNumberWithError(text);

/** E.164 (`+` and up to 15 digits), and a number that can exist (libphonenumber's metadata). */
const e164 = boundedString(16, 'must be a valid phone number in E.164 form, e.g. +493012345678 (at most 16 characters)', { error: 'must be a string' }).superRefine((value, ctx) => {
  const message = `must be a valid phone number in E.164 form, e.g. +493012345678 (got "${value}")`;
  if (!/^\+[1-9]\d{1,14}$/.test(value)) {
    ctx.addIssue({ code: 'custom', message });
    return;
  }
  try {
    if (!parsePhoneNumberWithError(value).isValid()) ctx.addIssue({ code: 'custom', message });
  } catch {
    ctx.addIssue({ code: 'custom', message });
  }
});

export { VEHICLE_CATEGORIES };

export const afirDetailsSchema = z.looseObject(
  {
    address: z
      .union([
        text,
        z.looseObject({ street: text.optional(), house_number: text.optional(), postal_code: text.optional(), city: text.optional(), country: text.optional() }),
      ], { error: 'must be a string or an object (street, house_number, postal_code, city, country)' })
      .optional(),
    coordinates: coordinates.optional(),
    entrance_coordinates: coordinates.optional(),
    owner: text.optional(),
    amenities: texts('amenity').optional(),
    access_restrictions: text.optional(),
    payment_methods: texts('payment method').optional(),
    authorisation_methods: texts('authorisation method').optional(),
    contact: z
      .looseObject({
        email: emailAddress().optional(),
        website: boundedString(2000, 'must be a URL of at most 2000 characters').check(z.url('must be a URL')).optional(),
      })
      .optional(),
    nuts_region: boundedString(5, 'must be a NUTS code (two letters, then up to three letters or digits), e.g. DE300', { error: 'must be a string' }).regex(/^[A-Z]{2}[A-Z0-9]{0,3}$/, 'must be a NUTS code (two letters, then up to three letters or digits), e.g. DE300').optional(),
    location_directions: text.optional(),
    vehicle_types: uniqueItems(z.array(z.enum(VEHICLE_CATEGORIES, { error: `must be one of ${VEHICLE_CATEGORIES.join(', ')}` }), { error: 'must be a list' }), 'vehicle category').optional(),
    max_vehicle_mass: measure('t').optional(),
    max_vehicle_height: measure('m').optional(),
    max_vehicle_length: measure('m').optional(),
    max_vehicle_width: measure('m').optional(),
    parking_spaces: count.optional(),
    parking_spaces_disabled: count.optional(),
    service_support: text.optional(),
    contact_phone_number: e164.optional(),
    cumulative_daily_hydrogen_capacity: z.number({ error: 'must be a number (kg per day)' }).min(0, 'must be 0 or more (kg per day)').optional(),
  },
  { error: 'must be a JSON object' },
);
