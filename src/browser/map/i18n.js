/**
 * The page's words: one catalogue per language (i18n/<lang>.json, every visible string and every
 * accessible name), so a translation is one file. The language is the one chosen with the switch (kept
 * in localStorage), else the browser's first language we have, else English. Static elements name
 * their key: `data-i18n` (text), `data-i18n-aria-label`, `data-i18n-placeholder`.
 */

export const LANGUAGES = ['en', 'de'];
const STORAGE_KEY = 'hrs-map-language';

let catalogue = {};
let language = 'en';
let locale = 'en';
let plurals = new Intl.PluralRules('en');

/** The language to start with: the stored choice, else the browser's, else English. */
export function initialLanguage() {
  let stored = null;
  try {
    stored = localStorage.getItem(STORAGE_KEY);
  } catch {
    // storage refused (private mode): the browser's language decides
  }
  if (LANGUAGES.includes(stored)) return stored;
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = String(tag).toLowerCase().split('-')[0];
    if (LANGUAGES.includes(base)) return base;
  }
  return 'en';
}

/**
 * The browser's own variant of the language for dates and numbers (en-GB: "27 Nov 2026, 10:40 CET";
 * plain `en` would write "Nov 27, 2026, 10:40 AM GMT+1"), else the language itself.
 */
function regionalLocale(lang) {
  for (const tag of navigator.languages ?? [navigator.language]) {
    if (String(tag).toLowerCase().split('-')[0] !== lang) continue;
    try {
      return Intl.getCanonicalLocales(String(tag))[0];
    } catch {
      // not a valid tag: the next one, else the language
    }
  }
  return lang;
}

/** Loads a language's catalogue and applies it to the static elements; `remember`: keep the choice. */
export async function setLanguage(lang, remember = false) {
  const res = await fetch(`/map/i18n/${lang}.json`);
  if (!res.ok) throw new Error(`catalogue ${lang}: ${res.status}`);
  catalogue = await res.json();
  language = lang;
  locale = regionalLocale(lang);
  plurals = new Intl.PluralRules(lang);
  if (remember) {
    try {
      localStorage.setItem(STORAGE_KEY, lang);
    } catch {
      // not kept: the page still switches
    }
  }
  document.documentElement.lang = lang;
  document.title = t('page_title');
  for (const el of document.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of document.querySelectorAll('[data-i18n-aria-label]')) el.setAttribute('aria-label', t(el.dataset.i18nAriaLabel));
  for (const el of document.querySelectorAll('[data-i18n-placeholder]')) el.setAttribute('placeholder', t(el.dataset.i18nPlaceholder));
}

export const currentLanguage = () => language;
/** The locale for dates, numbers and sorting: the language in the browser's regional variant. */
export const currentLocale = () => locale;

/** The catalogue's text for `key` with `{name}` filled from `vars`; the key itself when missing (seen in tests). */
export function t(key, vars = {}) {
  const text = catalogue[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (name in vars ? String(vars[name]) : whole));
}

/** A counted phrase: `key_one` or `key_other` by the language's plural rules. */
export function tCount(key, count, vars = {}) {
  const form = plurals.select(count) === 'one' ? 'one' : 'other';
  return t(`${key}_${form}`, { ...vars, count: count.toLocaleString(locale) });
}

/** A duration in words, rounded to minutes below two hours, hours below two days, else days. */
export function durationWords(ms) {
  const minutes = Math.max(0, Math.floor(ms / 60_000));
  if (minutes < 120) return tCount('minutes', minutes);
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return tCount('hours', hours);
  return tCount('days', Math.floor(hours / 24));
}
