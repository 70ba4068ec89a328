-- The change log: what data users follow without reading everything again. Export v2's delta
-- (`GET /v2/hrs?updated_since=`, `GET /v2/hrs/events?updated_since=`) reads its `station` and `event`
-- rows; webhooks deliver every topic in `seq` order:
--   station  a production station was created, its exported static content changed, or it was deleted
--            (written by the triggers below; payload null: the record is read when it is delivered)
--   event    a station event was created, changed, ended (its end passed: written by a sweep) or deleted
--            (payload: the event as export v2 lists it)
--   status   a station's status of one signal category changed (a reading, its freshness, the layout)
--   option   a station's five-state status of one fuelling option changed
-- The `status` and `option` rows are recorded by every server instance that sees the change (each keeps
-- the live status of every station); `change_key` makes them one row.
--
-- `seq` is taken by hrs_change_seq(), which first takes a transaction-level advisory lock: transactions
-- that write the log write it one after another, so `seq` order is commit order and a reader that has
-- seen `seq` N has seen every change up to N. Writers that change several stations in one transaction
-- take the same lock before their first row (hrs_lock_change_log()), so they cannot deadlock with a
-- writer that locked one of those stations first.
CREATE SEQUENCE change_log_seq;

CREATE TABLE change_log (
  seq        bigint PRIMARY KEY,
  topic      text NOT NULL CHECK (topic IN ('station', 'event', 'status', 'option')),
  hrs_id     text NOT NULL,
  -- station: the hrs_id; event: hrs_id/event id; status: hrs_id/category; option: hrs_id/fuelling option
  entity     text NOT NULL,
  change     text NOT NULL CHECK (change IN ('created', 'changed', 'ended', 'deleted')),
  at         timestamptz NOT NULL,
  change_key text,
  payload    jsonb
);
CREATE UNIQUE INDEX change_log_key_idx ON change_log (change_key) WHERE change_key IS NOT NULL;
CREATE INDEX change_log_topic_seq_idx ON change_log (topic, seq);
-- By time within a topic: a delta from a time (the first change after it), pruning by age.
CREATE INDEX change_log_topic_at_idx ON change_log (topic, at);

-- Where the log starts: a delta from before it (or from before what has been pruned) is refused.
-- Pruning (db/queries/change-log.ts) removes `station` and `event` rows as a prefix in `seq` order, so
-- a position (a sync token) is complete when it is `pruned_seq` or later, and a time when it is
-- `started_at` and `pruned_at` or later. `status` and `option` rows (webhooks only) are pruned sooner
-- and apart: the horizon does not concern them.
CREATE TABLE change_log_horizon (
  singleton  boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- The newest seq of the station and event rows removed by pruning (0: nothing pruned yet).
  pruned_seq bigint NOT NULL DEFAULT 0,
  -- The newest `at` of those rows (null: nothing pruned yet).
  pruned_at  timestamptz
);
INSERT INTO change_log_horizon DEFAULT VALUES;

CREATE FUNCTION hrs_lock_change_log() RETURNS void LANGUAGE sql AS $$
  SELECT pg_advisory_xact_lock(hashtext('hrs change log'))
$$;

CREATE FUNCTION hrs_change_seq() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  PERFORM hrs_lock_change_log();
  RETURN nextval('change_log_seq');
END $$;

-- One row of the log (the lock first, then the time: `at` never goes back as `seq` goes up).
CREATE FUNCTION hrs_log_change(p_topic text, p_hrs_id text, p_entity text, p_change text, p_payload jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  s bigint := hrs_change_seq();
BEGIN
  INSERT INTO change_log (seq, topic, hrs_id, entity, change, at, payload)
  VALUES (s, p_topic, p_hrs_id, p_entity, p_change, clock_timestamp(), p_payload);
  -- Webhook workers LISTEN: told once per transaction, at its commit.
  PERFORM pg_notify('hrs_change_log', '');
END $$;

-- A station that becomes a sandbox sample (or stops being one) leaves (enters) the published list:
-- deleted (created) for the delta.
CREATE FUNCTION hrs_log_station_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM hrs_log_change('station', NEW.hrs_id, NEW.hrs_id, 'created', NULL);
  ELSIF TG_OP = 'UPDATE' AND NEW.sandbox THEN
    PERFORM hrs_log_change('station', NEW.hrs_id, NEW.hrs_id, 'deleted', NULL);
  ELSIF TG_OP = 'UPDATE' AND OLD.sandbox THEN
    PERFORM hrs_log_change('station', NEW.hrs_id, NEW.hrs_id, 'created', NULL);
  ELSIF TG_OP = 'UPDATE' THEN
    PERFORM hrs_log_change('station', NEW.hrs_id, NEW.hrs_id, 'changed', NULL);
  ELSE
    PERFORM hrs_log_change('station', OLD.hrs_id, OLD.hrs_id, 'deleted', NULL);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER stations_log_created AFTER INSERT ON stations
  FOR EACH ROW WHEN (NOT NEW.sandbox) EXECUTE FUNCTION hrs_log_station_change();
CREATE TRIGGER stations_log_changed AFTER UPDATE OF static_modified_at, sandbox ON stations
  FOR EACH ROW WHEN (OLD.sandbox IS DISTINCT FROM NEW.sandbox
                     OR (NOT NEW.sandbox AND OLD.static_modified_at IS DISTINCT FROM NEW.static_modified_at))
  EXECUTE FUNCTION hrs_log_station_change();
CREATE TRIGGER stations_log_deleted AFTER DELETE ON stations
  FOR EACH ROW WHEN (NOT OLD.sandbox) EXECUTE FUNCTION hrs_log_station_change();

-- An instant as export v2 writes it (JavaScript's toISOString: UTC, milliseconds, `Z`), whatever the
-- session's time zone.
CREATE FUNCTION hrs_instant_text(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- An event as export v2 lists it.
CREATE FUNCTION hrs_event_json(e station_events) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('id', e.id, 'kind', e.kind, 'starts_at', hrs_instant_text(e.starts_at),
                            'ends_at', hrs_instant_text(e.ends_at), 'description', e.description)
$$;

-- Events of production stations only. A station's removal removes its events by cascade, when the
-- station row is gone: their `deleted` rows are written before it (hrs_log_station_events_removed).
CREATE FUNCTION hrs_log_event_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  e station_events := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM stations WHERE hrs_id = e.hrs_id AND NOT sandbox) THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    PERFORM hrs_log_change('event', e.hrs_id, e.hrs_id || '/' || e.id, 'created', hrs_event_json(e));
  ELSIF TG_OP = 'UPDATE' THEN
    IF hrs_event_json(OLD) IS DISTINCT FROM hrs_event_json(NEW) THEN
      PERFORM hrs_log_change('event', e.hrs_id, e.hrs_id || '/' || e.id, 'changed', hrs_event_json(e));
    END IF;
  ELSE
    PERFORM hrs_log_change('event', e.hrs_id, e.hrs_id || '/' || e.id, 'deleted', jsonb_build_object('id', e.id));
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER station_events_log AFTER INSERT OR UPDATE OR DELETE ON station_events
  FOR EACH ROW EXECUTE FUNCTION hrs_log_event_change();

-- A production station's removal: a `deleted` row for each of its events first, so that a client of the
-- events delta (or a webhook of kind `events`) alone sees them go; the station's own row follows.
CREATE FUNCTION hrs_log_station_events_removed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  e station_events;
BEGIN
  FOR e IN SELECT * FROM station_events WHERE hrs_id = OLD.hrs_id ORDER BY id LOOP
    PERFORM hrs_log_change('event', e.hrs_id, e.hrs_id || '/' || e.id, 'deleted', jsonb_build_object('id', e.id));
  END LOOP;
  RETURN OLD;
END $$;

CREATE TRIGGER stations_log_events_removed BEFORE DELETE ON stations
  FOR EACH ROW WHEN (NOT OLD.sandbox) EXECUTE FUNCTION hrs_log_station_events_removed();

-- The `change_key` of an event's end: the event and the instant (µs) it ended at.
CREATE FUNCTION hrs_event_end_key(e station_events) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT 'event.ended:' || e.hrs_id || '/' || e.id || '@' || (extract(epoch FROM e.ends_at) * 1000000)::bigint
$$;

-- What the sweep looks through: events by their end.
CREATE INDEX station_events_ends_at_idx ON station_events (ends_at) WHERE ends_at IS NOT NULL;

-- The `ended` rows: one per event whose `ends_at` has passed, written by a sweep (the change-log job
-- every 30 seconds, and every events delta before it reads). `change_key` names the event and the end
-- it reached, so sweeps on several processes write one row, and an event whose end is moved and passes
-- again ends again. Events that ended before `p_since` (the retention's start) are left alone: their
-- rows would be pruned at once. Checked without the lock first (most sweeps find nothing); returns how
-- many rows it wrote.
CREATE FUNCTION hrs_log_ended_events(p_since timestamptz) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  n integer;
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM station_events e JOIN stations s ON s.hrs_id = e.hrs_id AND NOT s.sandbox
    WHERE e.ends_at <= clock_timestamp() AND e.ends_at > p_since
      AND NOT EXISTS (SELECT 1 FROM change_log c WHERE c.change_key = hrs_event_end_key(e))
  ) THEN
    RETURN 0;
  END IF;
  PERFORM hrs_lock_change_log();
  -- Under the lock, so this statement's snapshot sees every other sweep's rows; one `at` for all.
  INSERT INTO change_log (seq, topic, hrs_id, entity, change, at, change_key, payload)
  SELECT nextval('change_log_seq'), 'event', e.hrs_id, e.hrs_id || '/' || e.id, 'ended', clock_timestamp(), hrs_event_end_key(e), hrs_event_json(e)
  FROM (SELECT e.* FROM station_events e JOIN stations s ON s.hrs_id = e.hrs_id AND NOT s.sandbox
        WHERE e.ends_at <= clock_timestamp() AND e.ends_at > p_since
          AND NOT EXISTS (SELECT 1 FROM change_log c WHERE c.change_key = hrs_event_end_key(e))
        ORDER BY e.ends_at, e.hrs_id, e.id) e
  ON CONFLICT (change_key) WHERE change_key IS NOT NULL DO NOTHING;
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN
    PERFORM pg_notify('hrs_change_log', '');
  END IF;
  RETURN n;
END $$;

