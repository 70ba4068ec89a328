-- Webhook delivery's queue is PostgreSQL alone (docs/architecture.md, "Webhooks"): a worker claims due
-- subscriptions with FOR UPDATE SKIP LOCKED, woken by LISTEN (hrs_change_log, hrs_webhooks) and by a
-- poll; BullMQ no longer holds a job per subscription.
--
-- `next_attempt_at` is when the subscription is next due, whatever makes it so: a failed attempt's
-- backoff, or the claim of the worker delivering to it (it lapses if that worker dies, so another takes
-- over). NULL: due as soon as it has a pending message or a wanted change past its cursor. The lease
-- column it replaces goes.
ALTER TABLE webhook_subscriptions DROP COLUMN delivery_claimed_until;

-- Pings asked for and not yet sent (their message ids): a claim takes them all.
ALTER TABLE webhook_subscriptions ADD COLUMN pending_pings text[] NOT NULL DEFAULT '{}';

-- What the claim looks at first: active subscriptions by when they are due.
CREATE INDEX webhook_subscriptions_due_idx ON webhook_subscriptions (next_attempt_at) WHERE state = 'active';
CREATE INDEX webhook_subscriptions_pings_idx ON webhook_subscriptions (id) WHERE pending_pings <> '{}';
