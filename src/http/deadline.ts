import type { HttpError } from './errors.js';
import type { RequestDeadline } from './family.js';
import type { Request } from './request.js';

/**
 * A family's deadline on one request (Family.deadline): armed once the body has arrived (at once
 * without one), so a client's slow upload is not the platform's time; when it passes before anything
 * answered the request, the request is answered with the family's refusal and a warning is logged.
 * Whatever the handler comes to later is dropped (the server answers a request once).
 */
export function watchDeadline(
  deadline: RequestDeadline | undefined,
  req: Request,
  body: Promise<Buffer> | undefined,
  answered: () => boolean,
  refuse: (err: HttpError) => void,
): { clear(): void } {
  let timer: NodeJS.Timeout | undefined;
  let cleared = false;
  const clear = () => {
    cleared = true;
    clearTimeout(timer);
  };
  if (!deadline) return { clear };
  const arm = () => {
    if (cleared || answered()) return;
    timer = setTimeout(() => {
      if (answered() || req.abort.aborted) return;
      req.log.warn({ method: req.method, path: req.path, deadline_ms: deadline.ms }, 'request not answered within its deadline');
      refuse(deadline.refusal(req));
    }, deadline.ms);
  };
  if (body) body.then(arm, () => undefined);
  else arm();
  return { clear };
}
