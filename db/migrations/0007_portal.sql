-- The portal's sign-in and the links that reveal a token an admin issued. Secrets are stored as their
-- SHA-256 only: the e-mailed link (or the cookie) holds the value.
--
--   sign_in_links   single-use, 15 minutes, consumed by a POST (a prefetching mail scanner's GET does not)
--   portal_sessions server-side sessions behind the HttpOnly cookie: idle and absolute timeouts, revoked on
--                   sign-out and when the account is deactivated
--   reveal_links    a personal token issued by an admin for an address: the token is made when the link is
--                   used (so its value is never stored anywhere), once; 7 days by default

CREATE TABLE sign_in_links (
  hash       bytea PRIMARY KEY CHECK (length(hash) = 32),
  user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz
);
CREATE INDEX sign_in_links_user_idx ON sign_in_links (user_id);

CREATE TABLE portal_sessions (
  hash         bytea PRIMARY KEY CHECK (length(hash) = 32),
  user_id      text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_seen_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz
);
CREATE INDEX portal_sessions_user_idx ON portal_sessions (user_id) WHERE revoked_at IS NULL;

CREATE TABLE reveal_links (
  hash             bytea PRIMARY KEY CHECK (length(hash) = 32),
  user_id          text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token_name       text NOT NULL CHECK (token_name <> ''),
  token_expires_at timestamptz NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at       timestamptz NOT NULL,
  used_at          timestamptz,
  token_id         bigint REFERENCES tokens (id) ON DELETE SET NULL
);
