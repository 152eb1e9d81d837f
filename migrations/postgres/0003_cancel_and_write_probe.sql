-- A cancel is remembered on its campaign, so a run still executing when its host stopped is
-- never queued again; and a one-row table a host writes to learn whether the database can be
-- written.
ALTER TABLE campaigns ADD COLUMN cancelled_ms BIGINT;

CREATE TABLE write_probe (
    id         INTEGER NOT NULL PRIMARY KEY,
    checked_ms BIGINT  NOT NULL
);
