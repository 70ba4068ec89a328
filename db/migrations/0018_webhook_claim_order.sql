-- The claim's order (db/queries/webhook-delivery.ts claimDue): the subscription waiting longest first.
-- With it the claim walks subscriptions in that order and stops at its limit once it has found enough
-- due ones, instead of asking of every subscription whether the log holds a change it wants (a
-- thousand subscriptions behind a busy log made that about 10 ms of PostgreSQL a claim).
CREATE INDEX webhook_subscriptions_claim_order_idx ON webhook_subscriptions ((COALESCE(next_attempt_at, last_delivery_at, created_at)));
