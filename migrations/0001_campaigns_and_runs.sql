-- Campaigns as submitted, the runs they expand to, and the samples each run took.

CREATE TABLE campaigns (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT    NOT NULL UNIQUE,
    name       TEXT    NOT NULL,
    spec       TEXT    NOT NULL,
    created_ms INTEGER NOT NULL,
    rerun_of   TEXT,
    survey     TEXT
);

CREATE TABLE runs (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    campaign_seq       INTEGER NOT NULL REFERENCES campaigns (seq) ON DELETE CASCADE,
    position           INTEGER NOT NULL,
    test               TEXT    NOT NULL,
    params             TEXT    NOT NULL,
    status             TEXT    NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled', 'interrupted')),
    attempts           INTEGER NOT NULL DEFAULT 0,
    started_ms         INTEGER,
    finished_ms        INTEGER,
    bytes              INTEGER,
    files              INTEGER,
    seconds            REAL,
    mb_per_s           REAL,
    process_cpu_pct    REAL,
    system_cpu_pct     REAL,
    reader_busy_pct    REAL,
    reader_wait_pct    REAL,
    reader_waits       INTEGER,
    writer_busy_pct    REAL,
    writer_wait_pct    REAL,
    writer_waits       INTEGER,
    latency_p50_us     INTEGER,
    latency_p99_us     INTEGER,
    latency_max_us     INTEGER,
    latency_of         TEXT,
    cache_resident_pct REAL,
    warnings           TEXT    NOT NULL DEFAULT '[]',
    error              TEXT,
    UNIQUE (campaign_seq, position)
);

CREATE INDEX runs_by_status ON runs (status, id);

CREATE TABLE samples (
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    t        REAL    NOT NULL,
    mb_per_s REAL    NOT NULL,
    PRIMARY KEY (run_id, t)
) WITHOUT ROWID;

-- A campaign's status follows from its runs' statuses.
CREATE VIEW campaign_status AS
SELECT
    c.seq AS seq,
    CASE
        WHEN SUM(r.status = 'running') > 0 THEN 'running'
        WHEN SUM(r.status = 'interrupted') > 0 THEN 'interrupted'
        WHEN SUM(r.status = 'queued') = COUNT(*) THEN 'queued'
        WHEN SUM(r.status = 'queued') > 0 THEN 'running'
        WHEN SUM(r.status = 'cancelled') > 0 THEN 'cancelled'
        WHEN SUM(r.status = 'failed') > 0 THEN 'failed'
        ELSE 'done'
    END AS status
FROM campaigns AS c
JOIN runs AS r ON r.campaign_seq = c.seq
GROUP BY c.seq;
