/**
 * The page's state in its address, so a link can be shared and Back works:
 * `#/station/BERLA?option=700ld&available=1&open=1&heavy=1&q=berlin&view=list`. Every change of a
 * filter or of the open station is a history entry; typing in the search box replaces the entry (a
 * word is one step back, not one per letter). The page renders from the address on every `hashchange`.
 */
import { OPTIONS } from './status.js';

const EMPTY = { station: null, option: '', available: false, open: false, heavy: false, q: '', view: 'map' };

/** The state an address names; anything it does not understand is left at its default. */
export function parseHash(hash) {
  const text = hash.replace(/^#/, '');
  const [path = '', query = ''] = text.split('?');
  const params = new URLSearchParams(query);
  const match = /^\/station\/([A-Za-z0-9_-]{1,64})$/.exec(path);
  const option = params.get('option') ?? '';
  return {
    station: match ? decodeURIComponent(match[1]) : null,
    option: OPTIONS.includes(option) ? option : '',
    available: params.get('available') === '1',
    open: params.get('open') === '1',
    heavy: params.get('heavy') === '1',
    q: (params.get('q') ?? '').slice(0, 100),
    view: params.get('view') === 'list' ? 'list' : 'map',
  };
}

/** The address of a state (defaults left out: the plain map is `#/`). */
export function toHash(state) {
  const params = new URLSearchParams();
  if (state.option) params.set('option', state.option);
  if (state.available) params.set('available', '1');
  if (state.open) params.set('open', '1');
  if (state.heavy) params.set('heavy', '1');
  if (state.q) params.set('q', state.q);
  if (state.view === 'list') params.set('view', 'list');
  const query = params.toString();
  return `#/${state.station ? `station/${encodeURIComponent(state.station)}` : ''}${query ? `?${query}` : ''}`;
}

export const currentState = () => ({ ...EMPTY, ...parseHash(location.hash) });

/** Moves to the state with `changes` applied: a new history entry, or (`replace`) the current one replaced. */
export function navigate(changes, { replace = false } = {}) {
  const next = toHash({ ...currentState(), ...changes });
  if (next === (location.hash || '#/')) return;
  if (replace) {
    history.replaceState(null, '', next);
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  } else {
    location.hash = next;
  }
}

/** Whether a station passes the filters (`best`: its value for the selected option, null when it lacks it). */
export function passes(properties, best, state) {
  if (state.option && best === null) return false;
  if (state.available && best !== 'AVAILABLE' && best !== 'LIMITEDLY_AVAILABLE') return false;
  if (state.open && !properties.open_now) return false;
  if (state.heavy && !properties.heavy_duty) return false;
  if (state.q) {
    const words = fold(state.q).split(/\s+/).filter(Boolean);
    const haystack = fold([properties.name, properties.city, properties.hrs_id, properties.postcode].filter(Boolean).join(' '));
    if (!words.every((w) => haystack.includes(w))) return false;
  }
  return true;
}

/** Lower case without accents: "Schönefeld" is found by "schonefeld". */
const fold = (text) => text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
