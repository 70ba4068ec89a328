-- Personal tokens' lifecycle and the e-mails their owners receive.
--
--   tokens.hint        the value's last four characters, shown in lists (never the value)
--   tokens.revoked_by  who revoked it: the owner (portal) or an admin
--   mail_outbox        every token e-mail the platform means to send, written in the same transaction
--                      as the token change it tells of, under a deterministic key; it is also the
--                      ledger: a row is sent at most once (claimed, then marked sent), and a reminder
--                      whose token was revoked or whose expiry changed is cancelled, never sent.

ALTER TABLE tokens ADD COLUMN hint text CHECK (hint IS NULL OR length(hint) BETWEEN 1 AND 8);
ALTER TABLE tokens ADD COLUMN revoked_by text CHECK (revoked_by IN ('owner', 'admin'));

CREATE TABLE mail_outbox (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- 'token:<id>:created', 'token:<id>:revoked', 'token:<id>:expiring:<days>:<expiry ISO>'
  key          text NOT NULL UNIQUE,
  kind         text NOT NULL CHECK (kind IN ('created', 'revoked', 'expiring')),
  token_id     bigint NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
  recipient    text NOT NULL,
  -- For 'expiring': how many days before expiry, and the expiry it was scheduled for.
  days_before  int,
  expires_at   timestamptz,
  revoked_by   text CHECK (revoked_by IN ('owner', 'admin')),
  due_at       timestamptz NOT NULL,
  state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sending', 'sent', 'cancelled', 'failed')),
  -- While 'sending': until when the claim holds (a worker that died lets it go after this).
  claimed_until timestamptz,
  attempts     int NOT NULL DEFAULT 0,
  last_error   text,
  message_id   text,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  sent_at      timestamptz,
  CHECK ((kind = 'expiring') = (days_before IS NOT NULL))
);
-- What the sweep and the admins' list read: the rows still to send, by when they are due.
CREATE INDEX mail_outbox_pending_idx ON mail_outbox (due_at) WHERE state IN ('pending', 'sending');
CREATE INDEX mail_outbox_token_idx ON mail_outbox (token_id);
