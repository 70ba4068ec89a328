-- The API call log: per signal originator, the calls its call_log_mode asks to keep (see
-- originators.call_log_mode). Written in batches by the call-log worker; read by the admin API.
--   request_body   the body as received (decoded as UTF-8, capped, with a marker when cut)
--   response_body  and error_details: failed calls only (status >= 400), null otherwise

CREATE TABLE call_logs (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  originator_id text NOT NULL REFERENCES originators (id) ON DELETE CASCADE,
  request_time  timestamptz NOT NULL,
  -- Method and path as routed, e.g. 'POST /import/v2/signal/usage/'.
  endpoint      text NOT NULL CHECK (endpoint <> ''),
  -- The stations the request named, in request order; empty when it named none or was unreadable.
  station_ids   text[] NOT NULL DEFAULT '{}',
  status        smallint NOT NULL CHECK (status BETWEEN 100 AND 599),
  request_body  text NOT NULL,
  response_body text,
  error_details jsonb,
  request_id    text NOT NULL
);
CREATE INDEX call_logs_originator_time_idx ON call_logs (originator_id, request_time DESC, id DESC);
