-- When the published status history last changed: the `Last-Modified` of export v2's reliability and
-- history answers. Set by every roll-up that publishes hours and by the retention's deletions
-- (workers/history/jobs.ts), so that a client revalidating with `If-Modified-Since` gets a 304 only
-- while what it holds is still what is published.
ALTER TABLE history_progress ADD COLUMN changed_at timestamptz NOT NULL DEFAULT now();
