/**
 * Content negotiation by the `Accept` header (RFC 9110 §12.5.1): the weight a header gives a media
 * type is the `q` of its most specific range that matches (`type/subtype`, then `type/*`, then
 * `*\/*`), 1 when no `q` is given, 0 when no range matches. Parameters other than `q` are ignored.
 */
export function mediaQuality(accept: string | undefined, type: string): number {
  if (!accept) return 0;
  const [main] = type.split('/');
  let best = 0;
  let bestSpecificity = -1;
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.trim().toLowerCase().split(';');
    const name = range.trim();
    const [rangeMain, rangeSub] = name.split('/');
    const specificity = name === type ? 2 : rangeSub === '*' && rangeMain === main ? 1 : name === '*/*' ? 0 : -1;
    if (specificity <= bestSpecificity) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (!Number.isFinite(weight) || weight < 0 || weight > 1) continue;
    [best, bestSpecificity] = [weight, specificity];
  }
  return best;
}

/**
 * Whether the header prefers `type` to `over`: a strictly higher weight. On a tie `over` (the default
 * representation) is kept, so `*\/*` or no header at all never changes what a client gets.
 */
export function prefersMedia(accept: string | undefined, type: string, over: string): boolean {
  const quality = mediaQuality(accept, type);
  return quality > 0 && quality > mediaQuality(accept, over);
}
