-- Whether the change log holds every station and event change since the registry was empty. It does
-- where the log came with the schema: its migration (0014) was applied in the same transaction as the
-- first (both rows of schema_migrations have that transaction's xmin), so no station existed before
-- the log's start. Where the log was added to a registry that already had stations, it does not: a
-- station unchanged since then, or removed before it, is not in the log.
--
-- A delta from a time (`updated_since`) before the log's start is then answered (everything since)
-- where the log is complete, and refused with 410 only where it is not; after pruning, a time before
-- the newest pruned change is refused either way (db/queries/change-log.ts).
ALTER TABLE change_log_horizon ADD COLUMN complete boolean NOT NULL DEFAULT false;
UPDATE change_log_horizon
SET complete = coalesce((SELECT first.xmin = log.xmin
                         FROM schema_migrations first, schema_migrations log
                         WHERE first.version = 1 AND log.version = 14), false);
