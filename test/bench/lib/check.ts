/** The placeholder a target's bodies carry for the time of sending (the load generator fills it in per request). */
export const NOW = '@@now@@';

/** What a benchmark target must say about itself to be checked before its load. */
export interface CheckedTarget {
  label: string;
  method?: string;
  headers?: Record<string, string>;
  bodies?: string[];
  status: number;
  expect: (body: string) => boolean;
}

/**
 * Sends the target's first request once (its time placeholder filled in) and refuses to benchmark an
 * answer other than the one expected: a load of refusals would measure the refusal. Resolves with the
 * response, for checks of its own a benchmark adds.
 */
export async function checkTarget(url: string, target: CheckedTarget): Promise<Response> {
  const body = target.bodies?.[0]?.split(NOW).join(new Date().toISOString());
  const res = await fetch(url, { method: target.method, headers: target.headers, body });
  const text = await res.text();
  let good = false;
  try {
    good = res.status === target.status && target.expect(text);
  } catch {
    good = false;
  }
  if (!good) throw new Error(`${target.label} answered ${res.status} ${text.slice(0, 300)}; not benchmarking that`);
  return res;
}
