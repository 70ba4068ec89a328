import type { z } from 'zod';
import type { AuthScheme } from './auth.js';
import type { ErrorStyle, HttpError, Reply } from './errors.js';
import type { FamilyDocument } from './openapi.js';
import type { FamilyPolicy } from './policy.js';
import type { Answering } from './respond.js';
import type { Request } from './request.js';

/** Where a value the core checks came from, as a family's `invalid` hook is told. */
export type InputPart = 'params' | 'query' | 'body';

/** What the core hands a family's `invalid` hook: the part of the request and zod's issues with it. */
export interface InvalidInput {
  part: InputPart;
  issues: readonly z.core.$ZodIssue[];
}

/** Runs after authentication and before the body is used; may throw an HttpError or add headers. */
export type Guard = (req: Request) => Promise<void> | void;

/** Sees every answered request of a family's authenticated routes once the response is written (call logs, metrics). */
export type Observer = ((req: Request, reply: Reply) => void) & {
  /**
   * Whether the observer will read `req.clientAddress` for this answer. Observers run once the answer
   * is written, when the connection can no longer tell its peer: the HTTP core reads the address just
   * before the answer for those that say so (reading it costs a few microseconds, so only then).
   */
  wantsClientAddress?: (req: Request, reply: Reply) => boolean;
};

/**
 * An API family as the HTTP core sees it: a value, declared by the family itself (src/api/<family>/),
 * and handed to the core with each route. The core knows no family by name.
 *
 * A response belongs to a family when its route does, or, for responses no route gives (an unknown
 * path, 405, OPTIONS, 501), when its path starts with the family's prefix (the longest such prefix).
 */
export interface Family {
  /** A stable name, for documents and logs: `import_v2`, `export_v2`, `admin`. */
  readonly name: string;
  /** Where the family's paths live: `/import/v2/`, `/v2/`. */
  readonly prefix: string;
  /** How its routes authenticate; a family without one has public routes only. */
  readonly auth?: AuthScheme;
  /** How its errors look (src/http/errors.ts: DRF_ERRORS, PROBLEM_ERRORS). */
  readonly errors: ErrorStyle;
  /** Headers on every response and CORS (src/http/policy.ts). */
  readonly policy?: FamilyPolicy;
  /** Run in order on every authenticated request (rate limits). */
  readonly guards?: readonly Guard[];
  /**
   * Run the guards on its public routes and sockets too (which take no credential, so `principal` is
   * undefined there): a family open to anyone that still limits each client address (the public map).
   * Off by default: public routes (documents, pages, health) skip the guards.
   */
  readonly guardsOnPublicRoutes?: boolean;
  /** Told of every answered authenticated request (call logs). */
  readonly observers?: readonly Observer[];
  /**
   * The refusal of a request whose path parameters, query or body do not match its route's schemas
   * (./contract.ts), in the family's own words; `defaultInvalid` there when absent.
   */
  readonly invalid?: (problem: InvalidInput) => HttpError;
  /** Its OpenAPI document, built at start from the routes registered for it (./openapi.ts); none when absent. */
  readonly document?: FamilyDocument;
  /**
   * How long a request of its routes may go without an answer once its body has arrived (or from its
   * start, without one): past it, it is answered with `refusal` (a 503 with Retry-After, say), whatever
   * it still waits on, and what it comes to later is dropped. None when absent.
   */
  readonly deadline?: RequestDeadline;
}

/** A family's bound on the time to answer a request: see `Family.deadline`. */
export interface RequestDeadline {
  ms: number;
  refusal: (req: Request) => HttpError;
}

/** A family as this server runs it: its policy compiled, its guards and observers (declared and added). */
export interface FamilyState extends Answering {
  family: Family;
  guards: Guard[];
  observers: Observer[];
}
