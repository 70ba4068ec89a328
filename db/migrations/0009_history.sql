-- Status history at scale: the readings and the intervals they make, partitioned by week; the open
-- interval of every series; hourly roll-ups; the watermarks of the jobs that keep them
-- (workers/history/).
--
-- A partition covers one ISO week, Monday 00:00 UTC to the next, and is named after its first day
-- (signal_history_w20261123). The partitions job creates them weeks ahead and drops those older than
-- HISTORY_RETENTION_DAYS; a DEFAULT partition catches any row outside them so that no write ever
-- fails for want of one, and the job moves such rows into their week when it creates it.

-- Creates the missing weekly partitions of `parent` (partitioned by range on a timestamptz) for every
-- week that overlaps [from_ts, to_ts). Rows of those weeks that sit in the DEFAULT partition are moved
-- into the new partition in the same transaction. Returns how many partitions it created.
CREATE FUNCTION hrs_create_week_partitions(parent regclass, key text, from_ts timestamptz, to_ts timestamptz)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  week timestamptz := date_trunc('week', from_ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
  name text;
  created integer := 0;
BEGIN
  WHILE week < to_ts LOOP
    name := format('%s_w%s', parent::text, to_char(week AT TIME ZONE 'UTC', 'YYYYMMDD'));
    IF to_regclass(name) IS NULL THEN
      EXECUTE format('CREATE TABLE %I (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name, parent);
      EXECUTE format(
        'WITH moved AS (DELETE FROM %I WHERE %I >= $1 AND %I < $2 RETURNING *) INSERT INTO %I SELECT * FROM moved',
        parent::text || '_default', key, key, name) USING week, week + interval '7 days';
      EXECUTE format('ALTER TABLE %s ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, name, week, week + interval '7 days');
      created := created + 1;
    END IF;
    week := week + interval '7 days';
  END LOOP;
  RETURN created;
END $$;

-- signal_history becomes partitioned by the reading's measurement time (import accepts readings at
-- most 5 minutes old and 30 seconds ahead, so a reading lands in the week it was received in).
ALTER TABLE signal_history RENAME TO signal_history_unpartitioned;
ALTER INDEX signal_history_station_idx RENAME TO signal_history_unpartitioned_station_idx;

CREATE TABLE signal_history (
  id              bigint GENERATED ALWAYS AS IDENTITY,
  hrs_id          text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  category        text NOT NULL CHECK (category IN ('availability', 'usage', 'hydrogen-storage', 'pricing')),
  originator_id   text NOT NULL REFERENCES originators (id) ON DELETE CASCADE,
  measured_at     timestamptz NOT NULL,
  received_at     timestamptz NOT NULL,
  transmission_id text,
  payload         jsonb NOT NULL
) PARTITION BY RANGE (measured_at);
-- No primary key: nothing refers to a reading by its id (a unique index would have to include
-- measured_at, and would cost a tenth of the table's size for nothing); the id orders readings
-- received in the same microsecond.
CREATE INDEX signal_history_station_idx ON signal_history (hrs_id, category, measured_at DESC);
-- The materialiser reads each minute's readings by receipt; rows arrive in that order, so a BRIN index
-- is a few pages where a B-tree would be a second copy of the column.
CREATE INDEX signal_history_received_idx ON signal_history USING brin (received_at);
CREATE TABLE signal_history_default PARTITION OF signal_history DEFAULT;

SELECT hrs_create_week_partitions('signal_history', 'measured_at',
  least(now(), coalesce((SELECT min(measured_at) FROM signal_history_unpartitioned), now())), now() + interval '28 days');
INSERT INTO signal_history (id, hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload)
  OVERRIDING SYSTEM VALUE
  SELECT id, hrs_id, category, originator_id, measured_at, received_at, transmission_id, payload FROM signal_history_unpartitioned;
SELECT setval(pg_get_serial_sequence('signal_history', 'id'), coalesce((SELECT max(id) FROM signal_history), 0) + 1, false);
DROP TABLE signal_history_unpartitioned;

-- The closed intervals of every series: a station's freshness per signal category (series =
-- the category: fresh, stale, unknown) and its five-state summary per fuelling option (series =
-- 'option:<code>': AVAILABLE … CLOSED, with the rule's reason). An interval is cut at every 00:00 UTC
-- it spans, so that each piece lies within one day (and one partition): the pieces of one unbroken
-- interval share `since`, its true start. The interval still open is in history_series.
CREATE TABLE status_intervals (
  hrs_id        text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  series        text NOT NULL,
  state         text NOT NULL,
  reason        text,
  -- Freshness: who sent the reading the interval comes from.
  originator_id text,
  starts_at     timestamptz NOT NULL,
  ends_at       timestamptz NOT NULL CHECK (ends_at > starts_at),
  since         timestamptz NOT NULL CHECK (since <= starts_at),
  PRIMARY KEY (hrs_id, series, starts_at)
) PARTITION BY RANGE (starts_at);
-- The roll-up reads an hour of every station's intervals.
CREATE INDEX status_intervals_starts_idx ON status_intervals USING brin (starts_at);
CREATE TABLE status_intervals_default PARTITION OF status_intervals DEFAULT;
SELECT hrs_create_week_partitions('status_intervals', 'starts_at', now() - interval '7 days', now() + interval '28 days');

-- Per series, where the materialiser stands: the open interval (state since `since`), the last
-- reading (freshness series; the availability series keeps its payload, which the summary is
-- evaluated from) and when the series next changes without a reading (`next_due`: a freshness
-- deadline, or the station's next opening or closing for a summary series).
CREATE TABLE history_series (
  hrs_id        text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  series        text NOT NULL,
  state         text NOT NULL,
  reason        text,
  originator_id text,
  since         timestamptz NOT NULL,
  measured_at   timestamptz,
  received_at   timestamptz,
  payload       jsonb,
  next_due      timestamptz,
  PRIMARY KEY (hrs_id, series)
);
CREATE INDEX history_series_due_idx ON history_series (next_due) WHERE next_due IS NOT NULL;

-- Milliseconds per state per series and hour (the part of the hour the series existed), the readings
-- received and the gaps (unknown intervals) that began in it. Freshness series fill the first three
-- state columns; summary series the five-state ones (unknown_ms is UNKNOWN's).
CREATE TABLE history_hourly (
  hrs_id         text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  series         text NOT NULL,
  originator_id  text NOT NULL DEFAULT '',
  hour           timestamptz NOT NULL,
  fresh_ms       integer NOT NULL DEFAULT 0,
  stale_ms       integer NOT NULL DEFAULT 0,
  unknown_ms     integer NOT NULL DEFAULT 0,
  available_ms   integer NOT NULL DEFAULT 0,
  limited_ms     integer NOT NULL DEFAULT 0,
  unavailable_ms integer NOT NULL DEFAULT 0,
  closed_ms      integer NOT NULL DEFAULT 0,
  readings       integer NOT NULL DEFAULT 0,
  gaps           integer NOT NULL DEFAULT 0,
  PRIMARY KEY (hrs_id, series, hour, originator_id)
);
CREATE INDEX history_hourly_originator_idx ON history_hourly (originator_id, hour) WHERE originator_id <> '';

-- 'materialized': intervals are complete up to this time; 'rolled_up': hourly roll-ups up to this hour.
CREATE TABLE history_progress (
  name  text PRIMARY KEY CHECK (name IN ('materialized', 'rolled_up')),
  until timestamptz NOT NULL
);

-- Every import call of an originator (v1, v1.1, v2), counted per hour whatever its call-log mode keeps
-- (src/api/call-stats.ts counts in memory and adds its counts every few seconds; several instances
-- add up): the error rate (rejected / all) and when it was last seen. A call answered 400 or above is
-- rejected, a partly accepted legacy batch included.
CREATE TABLE originator_call_stats (
  originator_id    text NOT NULL REFERENCES originators (id) ON DELETE CASCADE,
  hour             timestamptz NOT NULL,
  calls            integer NOT NULL CHECK (calls >= 0),
  rejected         integer NOT NULL CHECK (rejected >= 0 AND rejected <= calls),
  last_call_at     timestamptz,
  last_rejected_at timestamptz,
  PRIMARY KEY (originator_id, hour)
);
