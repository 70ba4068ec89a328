-- Station photos are decoded and re-encoded before they are stored (src/registry/file/photo.ts); those
-- stored before were only told from their first bytes.
--   stations.photo_checked  true once the stored photo is the re-encoded one. Every write of a photo sets
--                           it; `hrs serve` re-checks the others at start (re-encoded, or removed when
--                           they do not decode) and export never serves an unchecked photo.
ALTER TABLE stations ADD COLUMN photo_checked boolean NOT NULL DEFAULT false;
UPDATE stations SET photo_checked = true WHERE photo IS NULL;
