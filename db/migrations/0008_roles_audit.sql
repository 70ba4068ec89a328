-- Who may do what in the portal, and what was done.
--
--   users.is_admin        an account with the admin role: every portal request of any operator or originator
--   operator_members      operator staff: see and change their operator's stations, layouts, events, photos,
--                         assignments
--   originator_members    originator managers: their originator's import tokens, stations and call logs
--   audit_log             every change made through the portal or the admin API: who, when, what, before and
--                         after. No foreign keys: the trail outlives what it speaks of.
--   tokens.created_by     the account that made an import token in the portal (null: a registry file, an
--                         admin)

ALTER TABLE users ADD COLUMN is_admin boolean NOT NULL DEFAULT false;

CREATE TABLE operator_members (
  user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  operator_id text NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (user_id, operator_id)
);
CREATE INDEX operator_members_operator_idx ON operator_members (operator_id);

CREATE TABLE originator_members (
  user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  originator_id text NOT NULL REFERENCES originators (id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (user_id, originator_id)
);
CREATE INDEX originator_members_originator_idx ON originator_members (originator_id);

CREATE TABLE audit_log (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at            timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- `user:<id>` for a portal account, `admin-token` for the admin API's token.
  actor         text NOT NULL CHECK (actor <> ''),
  via           text NOT NULL CHECK (via IN ('portal', 'admin')),
  action        text NOT NULL CHECK (action <> ''),
  operator_id   text,
  hrs_id        text,
  originator_id text,
  -- What the change is about beyond those: an event id, a token id, a user id.
  subject       text,
  before        jsonb,
  after         jsonb
);
CREATE INDEX audit_log_operator_idx ON audit_log (operator_id, id DESC) WHERE operator_id IS NOT NULL;
CREATE INDEX audit_log_station_idx ON audit_log (hrs_id, id DESC) WHERE hrs_id IS NOT NULL;
CREATE INDEX audit_log_originator_idx ON audit_log (originator_id, id DESC) WHERE originator_id IS NOT NULL;

ALTER TABLE tokens ADD COLUMN created_by text REFERENCES users (id) ON DELETE SET NULL;
