import type { Sql } from '../../../db/connect.js';
import { openMigrated } from '../../../db/migrate.js';
import { publishedUntil } from '../../../db/queries/history.js';
import { optionHourlyRows } from '../../../db/queries/history-reads.js';
import { readRegistryRows } from '../../../db/queries/registry.js';
import { FORECAST_HISTORY_DAYS } from '../../api/forecast.js';
import { backtest, METHODS, ScoreBook, type Method, type OptionBacktest, type Scores } from '../../domain/forecast/evaluate.js';
import { DAY_MS } from '../../domain/forecast/model.js';
import { optionSeries } from '../../domain/history/timeline.js';
import { providedOptions } from '../../domain/import-v1/options.js';
import { isOpen } from '../../domain/opening-hours.js';
import { isSandboxId } from '../../domain/sandbox.js';
import type { StationLookup } from '../../domain/stations.js';
import { Registry } from '../../registry/registry.js';
import { UsageError, type Command } from '../command.js';
import { configInUse } from '../servers.js';

const DEFAULT_HOLDOUT_DAYS = 14;
const NAMES: Record<Method, string> = { forecast: 'forecast', persistence: 'persistence', hourly_rate: "hour's rate" };

/** `hrs forecast evaluate`: the availability forecast back-tested on the stored history (docs/forecast.md). */
export const forecast: Command = {
  summary: 'back-test the availability forecasts on the stored history: `hrs forecast evaluate`',
  usage: 'hrs forecast evaluate [--holdout-days N] [--station HRS_ID]',
  help:
    'Trains each station\'s forecast per fuelling option on its published hourly history before the last\n' +
    `N days (--holdout-days, default ${DEFAULT_HOLDOUT_DAYS}), forecasts the next 12 hours from every whole hour of those\n` +
    'held-out days, and scores what happened: the Brier score (0 is perfect, 0.25 a coin) and the\n' +
    'calibration error (how far a forecast\'s 0.8 is from coming true 80% of the time), beside two\n' +
    'baselines given the same hours: "the present state persists" and "the hour\'s historical rate".\n' +
    'Prints a line per station and option, the pooled figures, and the forecast\'s calibration by bin.\n' +
    `It learns from at most ${FORECAST_HISTORY_DAYS} days before the held-out ones, as the served forecast does.\n` +
    'Reads only: nothing is written.',
  options: { 'holdout-days': { type: 'string' }, station: { type: 'string' } },
  positionals: 1,
  async run({ positionals, values }, io) {
    if (positionals[0] !== 'evaluate') throw new UsageError(`unknown forecast command "${positionals[0]}" (usage: ${forecast.usage})`);
    const holdoutText = (values['holdout-days'] as string | undefined) ?? String(DEFAULT_HOLDOUT_DAYS);
    const holdoutDays = /^\d{1,3}$/.test(holdoutText) ? Number(holdoutText) : Number.NaN;
    if (!(holdoutDays >= 1 && holdoutDays <= 120)) throw new UsageError(`--holdout-days: a whole number of days from 1 to 120 (got "${holdoutText}")`);
    const only = values.station as string | undefined;
    const config = await configInUse(io, io.err);
    const { sql } = await openMigrated(config.databaseUrl);
    try {
      const published = await publishedUntil(sql);
      if (published === null) {
        io.err('no history is published yet: run `hrs history run` (or let the history worker run) first');
        return 1;
      }
      const registry = new Registry(() => readRegistryRows(sql));
      await registry.reload();
      if (only !== undefined && (registry.station(only) === undefined || isSandboxId(only))) throw new UsageError(`--station: no station ${only} in the registry`);
      const evaluation = await evaluateHistory(sql, registry, { end: published.until.getTime(), holdoutDays, retentionDays: config.historyRetentionDays, only });
      const { end, days } = evaluation;
      io.out(`held out: ${new Date(end - holdoutDays * DAY_MS).toISOString()} to ${new Date(end).toISOString()} (${holdoutDays} days); trained on the ${days - holdoutDays} days before`);

      const overall = evaluation.overall;
      const rows: string[][] = [];
      let tooShort = 0;
      for (const { hrsId, option, result } of evaluation.options) {
        if (!result.enough) {
          tooShort++;
          rows.push([hrsId, option, `too little history before the held-out days (${result.learned.knownHours} known hours)`]);
          continue;
        }
        const scores = scoresOf(result.books);
        rows.push([hrsId, option, String(scores.forecast.pairs), ...METHODS.map((m) => figures(scores[m])), best(scores)]);
      }
      const header = ['station', 'option', 'pairs', ...METHODS.map((m) => `${NAMES[m]}: Brier (calibration)`), 'best'];
      const total = scoresOf(overall);
      const footer = ['all', '', String(total.forecast.pairs), ...METHODS.map((m) => figures(total[m])), total.forecast.pairs > 0 ? best(total) : '-'];
      for (const line of table(header, [...rows, footer])) io.out(line);
      if (tooShort > 0) io.out(`${tooShort} option(s) with too little history to learn from: no forecast is served for them either`);
      if (total.forecast.pairs > 0) {
        io.out('');
        io.out('the forecast\'s calibration: pairs per bin of its probability, their mean probability against the mean outcome');
        for (const line of table(
          ['probability', 'pairs', 'mean probability', 'mean outcome'],
          total.forecast.bins.filter((b) => b.pairs > 0).map((b) => [`${b.from.toFixed(1)}-${b.to.toFixed(1)}`, String(b.pairs), b.meanProbability.toFixed(3), b.meanOutcome.toFixed(3)]),
        ))
          io.out(line);
      }
    } finally {
      await sql.end({ timeout: 5 });
    }
    return 0;
  },
};

export interface HistoryEvaluation {
  /** The held-out days end here (the last hour published); the rows read span `days` days before it. */
  end: number;
  days: number;
  /** Per station (in id order, the sandbox's left out) and option it provides: its back-test. */
  options: { hrsId: string; option: string; result: OptionBacktest }[];
  /** The options with enough history pooled, per method. */
  overall: Record<Method, ScoreBook>;
}

/**
 * What `hrs forecast evaluate` measures: every station's (or `only` one's) options back-tested on the
 * published hourly history up to `end`, the last `holdoutDays` held out, learning from at most
 * FORECAST_HISTORY_DAYS before them as the served forecast does.
 */
export async function evaluateHistory(
  sql: Sql, registry: StationLookup & { stationIds(): Iterable<string> },
  options: { end: number; holdoutDays: number; retentionDays: number; only?: string },
): Promise<HistoryEvaluation> {
  const { end, holdoutDays, only } = options;
  const stations = [...registry.stationIds()]
    .filter((id) => (only === undefined || id === only) && !isSandboxId(id))
    .sort()
    .map((id) => registry.station(id)!);
  const days = Math.min(options.retentionDays, FORECAST_HISTORY_DAYS + holdoutDays);
  const overall = books();
  const out: HistoryEvaluation['options'] = [];
  for (const station of stations) {
    const bySeries = await optionHourlyRows(sql, station.hrsId, new Date(end - days * DAY_MS), new Date(end));
    const open = (instant: number) => isOpen(station.openingHours, station.timeZone, new Date(instant), station.holidayCountry);
    for (const option of providedOptions(station)) {
      const result = backtest(bySeries.get(optionSeries(option)) ?? [], { timeZone: station.timeZone ?? 'UTC', isOpen: open, holdoutDays, end });
      if (result.enough) for (const m of METHODS) overall[m].merge(result.books[m]);
      out.push({ hrsId: station.hrsId, option, result });
    }
  }
  return { end, days, options: out, overall };
}

const books = (): Record<Method, ScoreBook> => ({ forecast: new ScoreBook(), persistence: new ScoreBook(), hourly_rate: new ScoreBook() });
export const scoresOf = (b: Record<Method, ScoreBook>): Record<Method, Scores> => ({ forecast: b.forecast.scores(), persistence: b.persistence.scores(), hourly_rate: b.hourly_rate.scores() });
const figures = (s: Scores) => (s.pairs > 0 ? `${s.brier.toFixed(4)} (${s.calibrationError.toFixed(3)})` : '-');
const best = (s: Record<Method, Scores>) => NAMES[METHODS.reduce((a, b) => (s[b].brier < s[a].brier ? b : a))];

/** Columns padded to their widest cell; a row of three cells or fewer runs on from the third column. */
function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.filter((r) => r.length === header.length).map((r) => r[i]!.length)));
  const line = (cells: string[]) => (cells.length === header.length ? cells.map((c, i) => c.padEnd(widths[i]!)).join('  ') : cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c)).join('  ')).trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)];
}

