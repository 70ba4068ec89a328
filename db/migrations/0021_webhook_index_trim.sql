-- Every claim, stored message and recorded outcome updates a subscription's row, and each of those
-- updates changes an indexed column (`next_attempt_at`, the claim's order; `cursor_seq`), so none is a
-- heap-only update: PostgreSQL writes a new entry into every index of the table each time, three
-- times per message delivered. Three of them no statement reads any more:
-- - `webhook_subscriptions_due_idx` (next_attempt_at) was the claim's way in until the claim walked
--   `webhook_subscriptions_claim_order_idx` (0018);
-- - `webhook_subscriptions_cursor_idx` (cursor_seq): nothing looks subscriptions up by cursor (the change
--   log is pruned by age, db/queries/change-log.ts);
-- - `webhook_subscriptions_active_idx` (state): the claim filters on the state while walking its order,
--   and the portal reads a user's subscriptions by `webhook_subscriptions_user_idx`.
DROP INDEX IF EXISTS webhook_subscriptions_due_idx;
DROP INDEX IF EXISTS webhook_subscriptions_cursor_idx;
DROP INDEX IF EXISTS webhook_subscriptions_active_idx;
