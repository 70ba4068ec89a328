-- Webhook delivery's own state (the workers in workers/webhooks/).
--
-- The pending message of a subscription: the changes it delivers next, formed once and resent as it is
-- (same webhook-id, same body) until the receiver takes it, so a receiver can drop a repeat by its id.
-- Its changes are the wanted ones in (cursor_seq, pending_last_seq]; on a 2xx the cursor moves to
-- pending_last_seq and the pending message is cleared. `pending_attempts` counts its attempts so far;
-- `next_attempt_at` is when the next one is due (its backoff), kept here so that a job lost with Redis
-- does not resend early.
ALTER TABLE webhook_subscriptions
  ADD COLUMN pending_message_id text,
  ADD COLUMN pending_body       text,
  ADD COLUMN pending_first_seq  bigint,
  ADD COLUMN pending_last_seq   bigint,
  ADD COLUMN pending_changes    integer,
  ADD COLUMN pending_attempts   integer NOT NULL DEFAULT 0,
  ADD COLUMN next_attempt_at    timestamptz,
  ADD CONSTRAINT webhook_subscriptions_pending_check CHECK (
    (pending_message_id IS NULL) = (pending_body IS NULL)
    AND (pending_message_id IS NULL) = (pending_last_seq IS NULL)
    AND (pending_message_id IS NULL) = (pending_first_seq IS NULL)
    AND (pending_message_id IS NULL) = (pending_changes IS NULL)
  );

-- What the sweep and the dispatcher read: active subscriptions by cursor.
CREATE INDEX webhook_subscriptions_cursor_idx ON webhook_subscriptions (cursor_seq) WHERE state = 'active';

-- The e-mail telling a subscription's owner it was disabled goes through the token e-mails' outbox
-- (0006): the same ledger (sent at most once), sweep and worker. Its row names the subscription
-- rather than a token.
ALTER TABLE mail_outbox ALTER COLUMN token_id DROP NOT NULL;
ALTER TABLE mail_outbox ADD COLUMN subscription_id text REFERENCES webhook_subscriptions (id) ON DELETE CASCADE;
ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check;
ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check CHECK (kind IN ('created', 'revoked', 'expiring', 'webhook_disabled'));
ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_subject_check CHECK (
  CASE WHEN kind = 'webhook_disabled' THEN subscription_id IS NOT NULL AND token_id IS NULL
       ELSE token_id IS NOT NULL AND subscription_id IS NULL END
);
CREATE INDEX mail_outbox_subscription_idx ON mail_outbox (subscription_id) WHERE subscription_id IS NOT NULL;

-- One delivery at a time per subscription, even when a job lost with Redis was made again while the
-- first still runs: a worker claims the subscription until this time (a lease a dead worker lets go).
ALTER TABLE webhook_subscriptions ADD COLUMN delivery_claimed_until timestamptz;
