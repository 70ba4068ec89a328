-- The readings' history without foreign keys to stations and originators.
--
-- A foreign key checks each inserted row with a query and a row lock on the station and the
-- originator (FOR KEY SHARE, which writes the locked rows' headers): about 9 µs of PostgreSQL's CPU per
-- stored reading in batches of 500, a third of what storing it costs, on the path every live
-- transmission takes. The history's rows only ever come from the import endpoints, for a station and an
-- originator the registry in memory has just checked, so what the keys still did was take the history
-- along when a station or an originator is removed: these triggers do that now. A reading whose
-- import statement was already running when its station was removed (its 204 then stands for a
-- reading of a station that no longer exists) is removed by the history worker's maintenance run
-- (workers/history/jobs.ts: orphaned readings of the last day).
DO $$
DECLARE
  key record;
BEGIN
  FOR key IN SELECT conname FROM pg_constraint WHERE conrelid = 'signal_history'::regclass AND contype = 'f' LOOP
    EXECUTE format('ALTER TABLE signal_history DROP CONSTRAINT %I', key.conname);
  END LOOP;
END $$;

CREATE FUNCTION hrs_forget_station_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM signal_history WHERE hrs_id = OLD.hrs_id;
  RETURN NULL;
END $$;

CREATE FUNCTION hrs_forget_originator_history() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM signal_history WHERE originator_id = OLD.id;
  RETURN NULL;
END $$;

CREATE TRIGGER stations_forget_history AFTER DELETE ON stations FOR EACH ROW EXECUTE FUNCTION hrs_forget_station_history();
CREATE TRIGGER originators_forget_history AFTER DELETE ON originators FOR EACH ROW EXECUTE FUNCTION hrs_forget_originator_history();
