-- Each station's IANA time zone (e.g. 'Europe/Berlin'), in which its opening_hours are read: the zone
-- the registry file names for it (time_zone), else the zone at the coordinates in its details; null
-- when neither is known. Written by the registry file loader (existing stations get theirs at the next
-- load); not exported static content, so a change leaves static_modified_at alone.

ALTER TABLE stations ADD COLUMN time_zone text CHECK (time_zone <> '');
