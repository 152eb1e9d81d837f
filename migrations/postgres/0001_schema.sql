-- The schema of a shared store, as the SQLite migrations leave it: campaigns as submitted, the
-- runs they expand to (each finished one's result as one JSON document), and the samples each
-- run took. Integers are BIGINT and reals DOUBLE PRECISION, as SQLite stores them.

CREATE TABLE campaigns (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT   NOT NULL UNIQUE,
    name       TEXT   NOT NULL,
    spec       TEXT   NOT NULL,
    created_ms BIGINT NOT NULL,
    rerun_of   TEXT,
    survey     TEXT,
    plan       TEXT,
    verdict    TEXT,
    headline   TEXT
);

CREATE TABLE runs (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    campaign_seq BIGINT NOT NULL REFERENCES campaigns (seq) ON DELETE CASCADE,
    position     BIGINT NOT NULL,
    test         TEXT   NOT NULL,
    params       TEXT   NOT NULL,
    status       TEXT   NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled', 'interrupted')),
    attempts     BIGINT NOT NULL DEFAULT 0,
    started_ms   BIGINT,
    finished_ms  BIGINT,
    bytes        BIGINT,
    seconds      DOUBLE PRECISION,
    mb_per_s     DOUBLE PRECISION,
    result       TEXT,
    UNIQUE (campaign_seq, position)
);

CREATE INDEX runs_by_status ON runs (status, id);

CREATE TABLE samples (
    run_id   BIGINT           NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    t        DOUBLE PRECISION NOT NULL,
    mb_per_s DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (run_id, t)
);

-- Campaigns by what they measure (the spec without its name).
CREATE INDEX campaigns_by_spec ON campaigns (((spec)::jsonb - 'name'), seq);
