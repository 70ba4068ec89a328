-- Keeping only a subscription's newest 100 attempts meant, for every delivered attempt recorded, finding
-- its 99th newest (a walk of the subscription's index entries and the hundred heap pages they point
-- to: a subscription's attempts are spread over the table among everyone else's) and deleting what is
-- older. That was most of the statement that records delivered messages. A delivered attempt now
-- trims its subscription's attempts every tenth time it is recorded, counted here: between two trims a
-- subscription holds up to 109 (the portal lists the newest 100). Failed attempts and pings still trim
-- at once.
ALTER TABLE webhook_subscriptions ADD COLUMN attempts_recorded bigint NOT NULL DEFAULT 0;
