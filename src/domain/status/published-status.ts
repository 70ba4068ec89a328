import type { StationDirectory } from '../stations.js';
import type { Verdicts } from './verdict.js';

/**
 * Export v2's station status object as data users get it, over REST (`/v2/hrs/status`,
 * `/v2/hrs/{hrs_id}/status`) and on the status stream alike: the live status's object
 * (machines/live-status.ts: `hrs_id` and the four sections) with the station's verdict per fuelling
 * option (`fuelling_options`, ./verdict.ts) after `hrs_id`.
 */

/** What is read of the live status: each station's object as JSON, and a version that moves with it. */
export interface LiveJson {
  stationJson(hrsId: string): string | undefined;
  readonly version: number;
}

/** How many stations' answers `stationBody` keeps at most (emptied when full): a megabyte and a bit per thousand. */
const KEPT_BODIES = 10_000;

/** One station's answer as bytes, the two parts it was made of, and the versions at which it last held. */
interface KeptBody {
  base: string;
  block: string;
  bytes: Buffer;
  /** The live status's and the verdicts' versions when it was last found to hold. */
  live: number;
  verdicts: number;
}

export class PublishedStatus {
  private sorted: { registry: number; ids: string[] } | undefined;
  /** Stations' objects as UTF-8, with the two parts each was made of (see `stationBody`). */
  private readonly bodies = new Map<string, KeptBody>();
  private counter = 0;
  private seen = { live: Number.NaN, verdicts: Number.NaN };

  constructor(
    private readonly live: LiveJson,
    private readonly verdicts: Pick<Verdicts, 'optionsJson' | 'version'>,
    private readonly stations: Pick<StationDirectory, 'station' | 'stationIds'> & { readonly version: number },
  ) {}

  /** One station's status object as JSON; undefined for a station not in the registry. */
  stationJson(hrsId: string): string | undefined {
    const base = this.live.stationJson(hrsId);
    if (base === undefined) return undefined;
    const block = this.verdicts.optionsJson(hrsId);
    if (block === undefined) return undefined;
    return composed(hrsId, base, block);
  }

  /**
   * One station's status object as UTF-8 bytes, as `GET /v2/hrs/{hrs_id}/status` answers it: kept while
   * both its parts (the live object and the verdict block, each kept by its maker until it changes)
   * hold, so an answer asked for again is neither joined nor encoded again. Undefined for a station
   * not in the registry.
   */
  stationBody(hrsId: string): Buffer | undefined {
    const kept = this.bodies.get(hrsId);
    const live = this.live.version;
    const verdicts = this.verdicts.version;
    // Nothing of any station moved since it was last found to hold: neither part is looked at.
    if (kept !== undefined && kept.live === live && kept.verdicts === verdicts) return kept.bytes;
    const base = this.live.stationJson(hrsId);
    if (base === undefined) return undefined;
    const block = this.verdicts.optionsJson(hrsId);
    if (block === undefined) return undefined;
    if (kept !== undefined && kept.base === base && kept.block === block) {
      kept.live = live;
      kept.verdicts = verdicts;
      return kept.bytes;
    }
    const bytes = Buffer.from(composed(hrsId, base, block));
    if (kept === undefined && this.bodies.size >= KEPT_BODIES) this.bodies.clear();
    this.bodies.set(hrsId, { base, block, bytes, live, verdicts });
    return bytes;
  }

  /** `{"stations": [...]}` over every registered production station (no sandbox station), sorted by hrs_id. */
  allJson(): string {
    const registry = this.stations.version;
    if (this.sorted?.registry !== registry) {
      const ids = [...this.stations.stationIds()].filter((id) => this.stations.station(id)?.sandbox !== true).sort();
      this.sorted = { registry, ids };
    }
    let json = '{"stations":[';
    let first = true;
    for (const id of this.sorted.ids) {
      const station = this.stationJson(id);
      if (station === undefined) continue;
      json += first ? station : `,${station}`;
      first = false;
    }
    return `${json}]}`;
  }

  /** Moves whenever anything `allJson` returns may have changed, so a reader may keep what it made of it until then. */
  get version(): number {
    const live = this.live.version;
    const verdicts = this.verdicts.version;
    if (this.seen.live !== live || this.seen.verdicts !== verdicts) {
      this.counter++;
      this.seen = { live, verdicts };
    }
    return this.counter;
  }
}

/** The live object (which starts with its `hrs_id`) with the verdict block after the `hrs_id`. */
function composed(hrsId: string, base: string, block: string): string {
  const head = `{"hrs_id":${JSON.stringify(hrsId)}`;
  return `${head},"fuelling_options":${block}${base.slice(head.length)}`;
}
