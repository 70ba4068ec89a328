-- Accepted (non-dry-run) import v2 transmissions.
--   signal_latest     the latest transmission per originator, station and category, whatever the
--                     assignment state was at receipt (live, testing, unassigned): what operators and
--                     the platform team look at when debugging an integration.
--   published_signals the published snapshot per station and category: the latest live transmission.
--                     The live-status layer restores from it at start.
--   signal_history    every live transmission, append-only: the station's status history.

CREATE TABLE signal_latest (
  originator_id    text NOT NULL REFERENCES originators (id) ON DELETE CASCADE,
  hrs_id           text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  category         text NOT NULL CHECK (category IN ('availability', 'usage', 'hydrogen-storage', 'pricing')),
  assignment_state text NOT NULL CHECK (assignment_state IN ('live', 'testing', 'unassigned')),
  measured_at      timestamptz NOT NULL,
  received_at      timestamptz NOT NULL,
  transmission_id  text,
  payload          jsonb NOT NULL,
  PRIMARY KEY (originator_id, hrs_id, category)
);

CREATE TABLE published_signals (
  hrs_id          text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  category        text NOT NULL CHECK (category IN ('availability', 'usage', 'hydrogen-storage', 'pricing')),
  originator_id   text NOT NULL REFERENCES originators (id) ON DELETE CASCADE,
  measured_at     timestamptz NOT NULL,
  received_at     timestamptz NOT NULL,
  transmission_id text,
  payload         jsonb NOT NULL,
  PRIMARY KEY (hrs_id, category)
);

CREATE TABLE signal_history (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  hrs_id          text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  category        text NOT NULL CHECK (category IN ('availability', 'usage', 'hydrogen-storage', 'pricing')),
  originator_id   text NOT NULL REFERENCES originators (id) ON DELETE CASCADE,
  measured_at     timestamptz NOT NULL,
  received_at     timestamptz NOT NULL,
  transmission_id text,
  payload         jsonb NOT NULL
);
CREATE INDEX signal_history_station_idx ON signal_history (hrs_id, category, measured_at DESC);
