/**
 * The station panel's driver alert form: "tell me by e-mail" when a fuelling option of the station is
 * available again, or when it goes down. It posts POST /map/v1/alerts with the map's language; the
 * answer (a confirmation e-mail on its way, or why not) is said in the form's status line. Nothing is
 * kept in the browser: the address goes to the server, which keeps it only while the alert lives.
 */
import { currentLanguage, t } from './i18n.js';
import { el, section } from './panel-parts.js';
import { OPTIONS } from './status.js';

let formCount = 0;

/** A labelled control: its label, the control, an id tying them. */
function field(labelText, control) {
  const id = `alert-${control.name}-${++formCount}`;
  control.id = id;
  const label = el('label', null, labelText);
  label.htmlFor = id;
  return el('div', 'alert-field', label, control);
}

/** The section for the station `detail` (its fuelling options), or null when it provides none. */
export function alertSection(detail) {
  const options = [...(detail.fuelling_options ?? [])]
    .map((o) => o.fuelling_option)
    .sort((a, b) => OPTIONS.indexOf(a) - OPTIONS.indexOf(b));
  if (options.length === 0) return null;
  const byOption = new Map((detail.fuelling_options ?? []).map((o) => [o.fuelling_option, o.status]));

  const option = el('select', null, ...options.map((code) => {
    const choice = el('option', null, t(`option_${code}`));
    choice.value = code;
    return choice;
  }));
  option.name = 'fuelling_option';

  const when = el('select', null);
  when.name = 'when';
  for (const value of ['available', 'unavailable']) {
    const choice = el('option', null, t(`alert_when_${value}`));
    choice.value = value;
    when.append(choice);
  }
  // The likelier wish first: "available again" for an option that is not available now, else "goes down".
  const suggest = () => {
    const status = byOption.get(option.value);
    when.value = status === 'AVAILABLE' || status === 'LIMITEDLY_AVAILABLE' ? 'unavailable' : 'available';
  };
  suggest();
  option.addEventListener('change', suggest);

  const email = el('input', null);
  email.type = 'email';
  email.name = 'email';
  email.required = true;
  email.autocomplete = 'email';
  email.maxLength = 254;

  const button = el('button', 'alert-submit', t('alert_submit'));
  button.type = 'submit';
  const status = el('p', 'alert-status');
  status.setAttribute('role', 'status');
  status.setAttribute('aria-live', 'polite');

  const form = el(
    'form',
    'alert-form',
    field(t('alert_option'), option),
    field(t('alert_when'), when),
    field(t('alert_email'), email),
    button,
    status,
    el('p', 'alert-privacy muted', t('alert_privacy')),
  );
  form.noValidate = false;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!form.reportValidity()) return;
    button.disabled = true;
    status.dataset.kind = 'info';
    status.textContent = t('alert_sending');
    try {
      const res = await fetch('/map/v1/alerts', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ hrs_id: detail.hrs_id, fuelling_option: option.value, when: when.value, email: email.value.trim(), language: currentLanguage() }),
      });
      const body = await res.json().catch(() => ({}));
      if (res.status === 202) {
        status.dataset.kind = 'ok';
        status.textContent = t('alert_sent', { email: email.value.trim(), hours: String(Math.round((body.confirm_within_seconds ?? 86_400) / 3600)) });
        email.value = '';
      } else {
        status.dataset.kind = 'error';
        status.textContent = res.status === 409 ? t('alert_limit') : res.status === 429 ? t('alert_throttled') : res.status === 400 ? t('alert_invalid') : t('alert_failed');
      }
    } catch {
      status.dataset.kind = 'error';
      status.textContent = t('alert_failed');
    } finally {
      button.disabled = false;
    }
  });
  return section(t('alert_title'), el('p', 'muted', t('alert_intro')), form);
}
