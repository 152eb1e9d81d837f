-- Schedules: a spec queued at the times a cron pattern names. `next_ms` is the next occurrence;
-- a lab fires it by moving `next_ms` on from the value it read, so of several labs on one
-- database exactly one fires each occurrence. Occurrences passed unfired are counted in `missed`.
CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    cron TEXT NOT NULL,
    spec TEXT NOT NULL,
    paused BIGINT NOT NULL DEFAULT 0,
    created_ms BIGINT NOT NULL,
    next_ms BIGINT NOT NULL,
    fired BIGINT NOT NULL DEFAULT 0,
    missed BIGINT NOT NULL DEFAULT 0,
    last_missed_ms BIGINT,
    last_error TEXT
);
CREATE INDEX schedules_by_next ON schedules (paused, next_ms);

-- Each occurrence fired, by the lab that fired it, with the campaign it queued (none when the
-- spec could not be queued then: `error` says why).
CREATE TABLE schedule_firings (
    schedule_id TEXT NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
    occurrence_ms BIGINT NOT NULL,
    host TEXT NOT NULL,
    fired_ms BIGINT NOT NULL,
    campaign_id TEXT,
    error TEXT,
    PRIMARY KEY (schedule_id, occurrence_ms)
);
