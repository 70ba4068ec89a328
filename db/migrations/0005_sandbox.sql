-- The export v1.1 sandbox's sample stations are flagged: every export path shows them to the sandbox
-- token only, and never to a production token (src/domain/sandbox.ts). Written by the registry loader
-- (the sandbox's own load sets it; a registry file cannot name a sandbox station).

ALTER TABLE stations ADD COLUMN sandbox boolean NOT NULL DEFAULT false;

-- The sandbox's list reads its few stations by this index; production lists read by hrs_id as before.
CREATE INDEX stations_sandbox_idx ON stations (hrs_id) WHERE sandbox;
