-- Webhook subscriptions: a token owner's HTTPS endpoint and the changes it wants, delivered from the
-- change log (0014) in `seq` order by the webhook workers. `cursor_seq`: every change up to it has been
-- delivered or was not wanted.
CREATE TABLE webhook_subscriptions (
  id          text PRIMARY KEY CHECK (id ~ '^wh_[a-z0-9]{16,40}$'),
  user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  url         text NOT NULL CHECK (url ~ '^https?://'),
  description text NOT NULL DEFAULT '',
  -- station_status (topic status), fuelling_options (option), station_records (station), events (event)
  kinds       text[] NOT NULL CHECK (cardinality(kinds) > 0 AND kinds <@ ARRAY['station_status', 'fuelling_options', 'station_records', 'events']),
  hrs_ids     text[],
  -- minLon, minLat, maxLon, maxLat
  bbox        float8[] CHECK (bbox IS NULL OR cardinality(bbox) = 4),
  state       text NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'disabled', 'unsubscribed')),
  cursor_seq  bigint NOT NULL,
  -- The signing secret sealed with WEBHOOK_SECRET_KEY (src/domain/webhooks/secrets.ts); after a rotation
  -- the previous one signs too until previous_secret_until.
  secret_sealed          bytea NOT NULL,
  previous_secret_sealed bytea,
  previous_secret_until  timestamptz,
  secret_rotated_at      timestamptz,
  -- Delivery's state: failing since the first failure of the message now pending (null: not failing);
  -- disabled (state 'disabled') after WEBHOOK_GIVE_UP_AFTER of failures, or unsubscribed by a 410.
  failing_since    timestamptz,
  disabled_at      timestamptz,
  disabled_reason  text,
  last_delivery_at timestamptz,
  -- Pings asked for so far: the n of a ping's message id (`msg_<id>_ping_<n>`), so each ping is its own message.
  pings       integer NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_subscriptions_user_idx ON webhook_subscriptions (user_id);
CREATE INDEX webhook_subscriptions_active_idx ON webhook_subscriptions (state) WHERE state = 'active';

-- Every delivery attempt (changes or ping); the newest 100 per subscription are kept.
CREATE TABLE webhook_deliveries (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  subscription_id text NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
  message_id      text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('changes', 'ping')),
  changes         integer NOT NULL DEFAULT 0,
  attempt         integer NOT NULL,
  status_code     integer,
  error           text,
  latency_ms      integer,
  at              timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_deliveries_subscription_idx ON webhook_deliveries (subscription_id, id DESC);
