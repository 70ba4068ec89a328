-- The registry: reference data, operators, stations with their layouts and events, signal originators,
-- assignments, portal users and API tokens of every generation.

-- Reference data ----------------------------------------------------------------------------------

CREATE TABLE v1_fuel_types (
  code        text PRIMARY KEY,
  description text NOT NULL,
  position    smallint NOT NULL UNIQUE
);
INSERT INTO v1_fuel_types (code, description, position) VALUES
  ('700car', 'Hydrogen at 700 bar for passenger cars', 1),
  ('350car', 'Hydrogen at 350 bar for passenger cars', 2),
  ('350bus', 'Hydrogen at 350 bar for buses', 3);

CREATE TABLE fuelling_options (
  code           text PRIMARY KEY,
  description    text NOT NULL,
  pressure_stage smallint NOT NULL CHECK (pressure_stage IN (350, 700)),
  vehicle_class  text NOT NULL CHECK (vehicle_class IN ('light-duty', 'heavy-duty')),
  position       smallint NOT NULL UNIQUE
);
INSERT INTO fuelling_options (code, description, pressure_stage, vehicle_class, position) VALUES
  ('700ld', 'Hydrogen at 700 bar for light-duty vehicles', 700, 'light-duty', 1),
  ('350ld', 'Hydrogen at 350 bar for light-duty vehicles', 350, 'light-duty', 2),
  ('700hd', 'Hydrogen at 700 bar for heavy-duty vehicles', 700, 'heavy-duty', 3),
  ('350hd', 'Hydrogen at 350 bar for heavy-duty vehicles', 350, 'heavy-duty', 4);

CREATE TABLE vehicle_categories (
  code     text PRIMARY KEY,
  name     text NOT NULL,
  position smallint NOT NULL UNIQUE
);
INSERT INTO vehicle_categories (code, name, position) VALUES
  ('M1', 'Passenger cars with at most eight seats besides the driver', 1),
  ('M2', 'Buses and coaches with more than eight passenger seats, up to 5 tonnes', 2),
  ('M3', 'Buses and coaches with more than eight passenger seats, over 5 tonnes', 3),
  ('N1', 'Goods vehicles up to 3.5 tonnes', 4),
  ('N2', 'Goods vehicles over 3.5 tonnes, up to 12 tonnes', 5),
  ('N3', 'Goods vehicles over 12 tonnes', 6);

CREATE TABLE event_kinds (
  code        text PRIMARY KEY,
  description text NOT NULL
);
INSERT INTO event_kinds (code, description) VALUES
  ('maintenance', 'Planned maintenance; the station may be out of service'),
  ('closure', 'The station is closed'),
  ('limited-service', 'The station operates with reduced capacity or options'),
  ('opening', 'The station opens'),
  ('other', 'Any other announcement');

-- Operators and stations ----------------------------------------------------------------------------

CREATE TABLE operators (
  id         text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  name       text NOT NULL CHECK (name <> ''),
  email      text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE stations (
  hrs_id             text PRIMARY KEY CHECK (hrs_id ~ '^[A-Z]{5}$'),
  operator_id        text NOT NULL REFERENCES operators (id),
  name               text NOT NULL CHECK (name <> ''),
  heavy_duty         boolean NOT NULL DEFAULT false,
  opening_hours      text,
  -- The v1.1 static (AFIR) dataset, exported as given.
  details            jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(details) = 'object'),
  photo              bytea,
  photo_media_type   text CHECK (photo_media_type IN ('image/jpeg', 'image/png', 'image/webp')),
  photo_sha256       bytea,
  -- Newest change to anything exported about the station as static content: its fields, its confirmed
  -- layout, its events. Real-time signals never touch it.
  static_modified_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK ((photo IS NULL) = (photo_media_type IS NULL))
);
CREATE INDEX stations_operator_idx ON stations (operator_id);

CREATE TABLE station_v1_fuel_types (
  hrs_id    text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  fuel_type text NOT NULL REFERENCES v1_fuel_types (code),
  PRIMARY KEY (hrs_id, fuel_type)
);

-- One row; changes whenever a station is added or removed, so list responses can tell.
CREATE TABLE station_set (
  singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  modified_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
INSERT INTO station_set DEFAULT VALUES;

-- Row-level: an upsert that inserts nothing must not count as a change.
CREATE FUNCTION touch_station_set() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE station_set SET modified_at = clock_timestamp();
  RETURN NULL;
END $$;
CREATE TRIGGER stations_set_changed AFTER INSERT OR DELETE ON stations
  FOR EACH ROW EXECUTE FUNCTION touch_station_set();

CREATE TABLE station_events (
  hrs_id      text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  id          text NOT NULL CHECK (id <> ''),
  kind        text NOT NULL REFERENCES event_kinds (code),
  starts_at   timestamptz NOT NULL,
  ends_at     timestamptz,
  description text NOT NULL DEFAULT '',
  PRIMARY KEY (hrs_id, id),
  CHECK (ends_at IS NULL OR ends_at > starts_at)
);
CREATE INDEX station_events_ends_idx ON station_events (hrs_id, starts_at);

-- Layouts: each station has at most one confirmed layout and at most one draft ----------------------

CREATE TABLE layouts (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  hrs_id       text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  kind         text NOT NULL CHECK (kind IN ('confirmed', 'draft')),
  -- Counts confirmations: 1 for the first confirmed layout, +1 for each one that replaces it.
  version      integer NOT NULL CHECK (version > 0),
  -- SHA-256 of the layout's canonical JSON, to tell an unchanged layout from a changed one.
  content_hash bytea NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  confirmed_at timestamptz,
  UNIQUE (hrs_id, kind),
  CHECK ((kind = 'confirmed') = (confirmed_at IS NOT NULL))
);

CREATE TABLE dispensers (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  layout_id    bigint NOT NULL REFERENCES layouts (id) ON DELETE CASCADE,
  external_id  text NOT NULL CHECK (external_id <> ''),
  is_certified boolean NOT NULL,
  position     integer NOT NULL,
  UNIQUE (layout_id, external_id)
);

CREATE TABLE nozzles (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  layout_id      bigint NOT NULL REFERENCES layouts (id) ON DELETE CASCADE,
  dispenser_id   bigint NOT NULL REFERENCES dispensers (id) ON DELETE CASCADE,
  external_id    text NOT NULL CHECK (external_id <> ''),
  connector_type text NOT NULL,
  vehicle_side   text NOT NULL,
  is_certified   boolean NOT NULL,
  position       integer NOT NULL,
  -- Nozzle ids are unique across the whole layout: signals name a nozzle without its dispenser.
  UNIQUE (layout_id, external_id)
);
CREATE INDEX nozzles_dispenser_idx ON nozzles (dispenser_id);

CREATE TABLE nozzle_fuelling_options (
  nozzle_id       bigint NOT NULL REFERENCES nozzles (id) ON DELETE CASCADE,
  fuelling_option text NOT NULL REFERENCES fuelling_options (code),
  position        smallint NOT NULL,
  PRIMARY KEY (nozzle_id, fuelling_option)
);

CREATE TABLE storages (
  id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  layout_id           bigint NOT NULL REFERENCES layouts (id) ON DELETE CASCADE,
  external_id         text NOT NULL CHECK (external_id <> ''),
  nominal_capacity_kg numeric(10, 2) NOT NULL CHECK (nominal_capacity_kg >= 0),
  position            integer NOT NULL,
  UNIQUE (layout_id, external_id)
);

CREATE TABLE storage_dispensers (
  storage_id   bigint NOT NULL REFERENCES storages (id) ON DELETE CASCADE,
  dispenser_id bigint NOT NULL REFERENCES dispensers (id) ON DELETE CASCADE,
  position     integer NOT NULL,
  PRIMARY KEY (storage_id, dispenser_id)
);

CREATE TABLE products (
  id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  layout_id            bigint NOT NULL REFERENCES layouts (id) ON DELETE CASCADE,
  external_id          text NOT NULL CHECK (external_id <> ''),
  pressure_stage       smallint NOT NULL CHECK (pressure_stage IN (350, 700)),
  green_hydrogen_share numeric(5, 2) CHECK (green_hydrogen_share BETWEEN 0 AND 100),
  position             integer NOT NULL,
  UNIQUE (layout_id, external_id)
);

CREATE TABLE product_nozzles (
  product_id bigint NOT NULL REFERENCES products (id) ON DELETE CASCADE,
  nozzle_id  bigint NOT NULL REFERENCES nozzles (id) ON DELETE CASCADE,
  position   integer NOT NULL,
  PRIMARY KEY (product_id, nozzle_id)
);

-- A nozzle is effectively certified when it and its dispenser both are.
CREATE VIEW layout_nozzles AS
  SELECT n.*, d.external_id AS dispenser_external_id,
         (n.is_certified AND d.is_certified) AS is_effectively_certified
  FROM nozzles n JOIN dispensers d ON d.id = n.dispenser_id;

-- Signal originators, assignments, users, tokens ---------------------------------------------------

CREATE TABLE originators (
  id             text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  name           text NOT NULL CHECK (name <> ''),
  call_log_mode  text NOT NULL DEFAULT 'errors' CHECK (call_log_mode IN ('disabled', 'errors', 'always')),
  deactivated_at timestamptz,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE assignments (
  originator_id text NOT NULL REFERENCES originators (id) ON DELETE CASCADE,
  hrs_id        text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  -- The four v2 signal types, and 'v1' for the legacy generation's transmission state.
  signal_type   text NOT NULL CHECK (signal_type IN ('availability', 'usage', 'hydrogen-storage', 'pricing', 'v1')),
  state         text NOT NULL,
  updated_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (originator_id, hrs_id, signal_type),
  CHECK (CASE WHEN signal_type = 'v1' THEN state IN ('live', 'testing', 'inactive')
              ELSE state IN ('live', 'testing') END)
);
-- At most one live originator per station and signal type.
CREATE UNIQUE INDEX assignments_one_live ON assignments (hrs_id, signal_type) WHERE state = 'live';

CREATE TABLE users (
  id             text PRIMARY KEY CHECK (id ~ '^[a-z0-9][a-z0-9._@-]{0,63}$'),
  email          text NOT NULL CHECK (email ~ '^[^@\s]+@[^@\s]+$'),
  name           text,
  deactivated_at timestamptz,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX users_email_idx ON users (lower(email));

CREATE TABLE tokens (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  generation    text NOT NULL CHECK (generation IN ('import_v1', 'import_v2', 'export_v1', 'export_v2')),
  originator_id text REFERENCES originators (id) ON DELETE CASCADE,
  user_id       text REFERENCES users (id) ON DELETE CASCADE,
  name          text NOT NULL DEFAULT '',
  -- SHA-256 of the token value; the value itself is never stored.
  hash          bytea NOT NULL UNIQUE CHECK (length(hash) = 32),
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at    timestamptz,
  revoked_at    timestamptz,
  last_used_at  timestamptz,
  CHECK (CASE generation
           WHEN 'import_v1' THEN originator_id IS NOT NULL AND user_id IS NULL
           WHEN 'import_v2' THEN originator_id IS NOT NULL AND user_id IS NULL
           WHEN 'export_v2' THEN user_id IS NOT NULL AND originator_id IS NULL
           ELSE originator_id IS NULL AND user_id IS NULL END)
);
CREATE INDEX tokens_user_idx ON tokens (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX tokens_originator_idx ON tokens (originator_id) WHERE originator_id IS NOT NULL;
