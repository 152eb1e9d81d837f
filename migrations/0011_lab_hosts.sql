-- Lab hosts: every lab on the database registers under its name, with what it may read and
-- write (its policy, as JSON), a fingerprint of its token (the fleet shares one) and when it
-- was last heard from. A campaign names the host it
-- runs on (NULL: stored before hosts, any host takes it) and the host that checked its paths;
-- a running run names the host executing it and how long its lease lasts.
CREATE TABLE hosts (
    name         TEXT    NOT NULL PRIMARY KEY,
    policy       TEXT    NOT NULL,
    url          TEXT,
    token        TEXT    NOT NULL,
    started_ms   INTEGER NOT NULL,
    heartbeat_ms INTEGER NOT NULL
);

ALTER TABLE campaigns ADD COLUMN host TEXT;
ALTER TABLE campaigns ADD COLUMN checked_by TEXT;
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN lease_ms INTEGER;

CREATE INDEX runs_by_lease ON runs (status, lease_ms);
