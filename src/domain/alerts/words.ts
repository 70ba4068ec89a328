import type { FuellingOption } from '../vocabulary.js';

/**
 * The words of the driver alerts' e-mails and pages, in the two languages a driver may choose on the
 * map (the map's own: English and German). The fuelling options are named as the map names them.
 */
export const ALERT_LANGUAGES = ['en', 'de'] as const;
export type AlertLanguage = (typeof ALERT_LANGUAGES)[number];

export const OPTION_NAMES: Record<AlertLanguage, Record<FuellingOption, string>> = {
  en: { '700ld': '700 bar, cars', '350ld': '350 bar, cars', '700hd': '700 bar, trucks and buses', '350hd': '350 bar, trucks and buses' },
  de: { '700ld': '700 bar, Pkw', '350ld': '350 bar, Pkw', '700hd': '700 bar, Lkw und Busse', '350hd': '350 bar, Lkw und Busse' },
};

/** An option's name in the language; the code itself for one the vocabulary does not know. */
export function optionName(language: AlertLanguage, option: string): string {
  return (OPTION_NAMES[language] as Record<string, string>)[option] ?? option;
}

/** An instant in the station's zone, as a driver there reads a clock: `Mon 7 Dec 2026, 14:05 CET` / `Mo., 7. Dez. 2026, 14:05 MEZ`. */
export function localTime(date: Date, timeZone: string, language: AlertLanguage): string {
  const format = new Intl.DateTimeFormat(language === 'de' ? 'de-DE' : 'en-GB', {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone,
    timeZoneName: 'short',
  });
  return format.format(date);
}
