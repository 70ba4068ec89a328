-- Driver alerts: a driver without an account asks, from the public map, to be told by e-mail when a
-- fuelling option of a station becomes available again (`up`) or goes down (`down`).
--
--   driver_alerts   one alert: the address, its language, what it waits for. `pending` until the
--                   confirmation link is followed (double opt-in), then `active` until it expires or is
--                   unsubscribed; either way the row is deleted then, and with it the address (the
--                   outbox rows below go with it). `notified_side` is the side the driver last heard
--                   of, or found when confirming: a mail goes only when the settled side is the one
--                   wanted and differs from it.
--   alert_options   per station and fuelling option with live alerts: the side that has held for the
--                   settle time (`settled_side`), and a change of side still settling (`pending_*`),
--                   kept by the alerts worker as it follows the change log's `option` rows.
--   alert_cursor    how far in the change log the alerts worker has read.
--
-- Sides: `up` (AVAILABLE or LIMITEDLY_AVAILABLE), `down` (UNAVAILABLE), `none` (UNKNOWN or CLOSED: says
-- nothing, and a mail never follows it).
CREATE TABLE driver_alerts (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email           text NOT NULL CHECK (email <> '' AND length(email) <= 254),
  language        text NOT NULL CHECK (language IN ('en', 'de')),
  hrs_id          text NOT NULL REFERENCES stations (hrs_id) ON DELETE CASCADE,
  fuelling_option text NOT NULL,
  wants           text NOT NULL CHECK (wants IN ('up', 'down')),
  state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'active')),
  -- SHA-256 of the confirmation link's secret (the secret itself is only in the e-mail).
  confirm_hash    bytea NOT NULL,
  -- Until when the confirmation link holds (a pending alert is deleted after it).
  confirm_until   timestamptz NOT NULL,
  -- The secret of the links every message carries (manage, renew, one-click unsubscribe): a capability
  -- over this alert alone, gone with it.
  manage_token    text NOT NULL UNIQUE,
  notified_side   text CHECK (notified_side IN ('up', 'down')),
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  confirmed_at    timestamptz,
  expires_at      timestamptz,
  CHECK ((state = 'active') = (confirmed_at IS NOT NULL AND expires_at IS NOT NULL))
);
CREATE INDEX driver_alerts_email_idx ON driver_alerts (lower(email));
CREATE INDEX driver_alerts_option_idx ON driver_alerts (hrs_id, fuelling_option) WHERE state = 'active';
CREATE INDEX driver_alerts_station_idx ON driver_alerts (hrs_id);
CREATE INDEX driver_alerts_expiry_idx ON driver_alerts (expires_at) WHERE state = 'active';
CREATE INDEX driver_alerts_confirm_idx ON driver_alerts (confirm_until) WHERE state = 'pending';
CREATE UNIQUE INDEX driver_alerts_confirm_hash_idx ON driver_alerts (confirm_hash);

CREATE TABLE alert_options (
  hrs_id          text NOT NULL,
  fuelling_option text NOT NULL,
  settled_side    text CHECK (settled_side IN ('up', 'down', 'none')),
  settled_seq     bigint,
  settled_at      timestamptz,
  pending_side    text CHECK (pending_side IN ('up', 'down', 'none')),
  -- The change log row that began the change, and when it was recorded: it settles at pending_at + ALERT_SETTLE.
  pending_seq     bigint,
  pending_at      timestamptz,
  PRIMARY KEY (hrs_id, fuelling_option),
  CHECK ((pending_side IS NULL) = (pending_seq IS NULL AND pending_at IS NULL))
);
CREATE INDEX alert_options_due_idx ON alert_options (pending_at) WHERE pending_side IS NOT NULL;

CREATE TABLE alert_cursor (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  seq       bigint NOT NULL
);
-- The worker starts at the log's end when it first runs: alerts are about changes from now on.
INSERT INTO alert_cursor (seq) SELECT coalesce(max(seq), 0) FROM change_log;

-- Alert e-mails go through the outbox (0006): the same ledger (sent at most once), sweep and worker.
--   alert_transition  the wanted side has held for the settle time (key alert:<id>:<change seq>)
--   alert_expiring    the alert ends soon unless renewed (key alert:<id>:expiring:<expiry, epoch ms>)
ALTER TABLE mail_outbox ADD COLUMN alert_id bigint REFERENCES driver_alerts (id) ON DELETE CASCADE;
-- A transition's side and when the change began (the status has held since then).
ALTER TABLE mail_outbox ADD COLUMN alert_side text CHECK (alert_side IN ('up', 'down'));
ALTER TABLE mail_outbox ADD COLUMN alert_since timestamptz;
ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check;
ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check
  CHECK (kind IN ('created', 'revoked', 'expiring', 'webhook_disabled', 'alert_transition', 'alert_expiring'));
ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_subject_check;
ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_subject_check CHECK (
  CASE WHEN kind = 'webhook_disabled' THEN subscription_id IS NOT NULL AND token_id IS NULL AND alert_id IS NULL
       WHEN kind IN ('alert_transition', 'alert_expiring') THEN alert_id IS NOT NULL AND token_id IS NULL AND subscription_id IS NULL
       ELSE token_id IS NOT NULL AND subscription_id IS NULL AND alert_id IS NULL END
);
CREATE INDEX mail_outbox_alert_idx ON mail_outbox (alert_id) WHERE alert_id IS NOT NULL;
