import type { MetricObjectWithValues, MetricValue } from 'prom-client';

/** What the supervisor of `hrs serve --processes` and its server processes tell each other over IPC. */

export type Message =
  /** A server process listens. */
  | { hrs: 'ready'; port: number }
  /** A server process was scraped: it asks for every process's metrics. */
  | { hrs: 'metrics:gather'; id: number }
  /** The supervisor asks a server process for its own metrics… */
  | { hrs: 'metrics:collect'; id: number }
  /** …which it gives as prom-client's JSON. */
  | { hrs: 'metrics:collected'; id: number; metrics: MetricObjectWithValues<MetricValue<string>>[] }
  /** The exposition text for the whole set, to the process that was scraped (or why not). */
  | { hrs: 'metrics:gathered'; id: number; text?: string; error?: string };

/** The environment variable that makes `hrs serve` one server process of a set: its slot, 1 to N. */
export const PROCESS_SLOT = 'HRS_PROCESS';

export function isMessage(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && typeof (value as { hrs?: unknown }).hrs === 'string';
}
