-- A cancel is remembered on its campaign, so a run still executing when its lab stopped is
-- never queued again at the next start; and a one-row table the lab writes to learn whether
-- the database can be written (its disk may be full).
ALTER TABLE campaigns ADD COLUMN cancelled_ms INTEGER;

CREATE TABLE write_probe (
    id         INTEGER NOT NULL PRIMARY KEY,
    checked_ms INTEGER NOT NULL
);
