-- A finished run's result as one JSON document (the engine's RunResult without its samples,
-- which stay in `samples`). Only the figures SQL sums or sorts keep columns of their own:
-- bytes, seconds and mb_per_s, copied from the document when it is written.
ALTER TABLE runs ADD COLUMN result TEXT;

UPDATE runs SET result = json_object(
    'test', test,
    'params', json(params),
    'status', status,
    'bytes', COALESCE(bytes, 0),
    'files', COALESCE(files, 0),
    'seconds', COALESCE(seconds, 0.0),
    'mb_per_s', COALESCE(mb_per_s, 0.0),
    'cpu', json_object(
        'process_pct', COALESCE(process_cpu_pct, 0.0),
        'system_pct', COALESCE(system_cpu_pct, 0.0)),
    'stages', json_object(
        'reader_busy_pct', COALESCE(reader_busy_pct, 0.0),
        'reader_wait_pct', COALESCE(reader_wait_pct, 0.0),
        'reader_waits', COALESCE(reader_waits, 0),
        'writer_busy_pct', COALESCE(writer_busy_pct, 0.0),
        'writer_wait_pct', COALESCE(writer_wait_pct, 0.0),
        'writer_waits', COALESCE(writer_waits, 0)),
    'latency_us', CASE
        WHEN latency_p50_us IS NOT NULL AND latency_p99_us IS NOT NULL
             AND latency_max_us IS NOT NULL
        THEN json_object('p50', latency_p50_us, 'p99', latency_p99_us, 'max', latency_max_us)
    END,
    'latency_of', latency_of,
    'cache_resident_pct', cache_resident_pct,
    'samples', json('[]'),
    'warnings', json(warnings),
    'error', error,
    'tape', json(tape),
    'clients', json(clients),
    'partial', json(CASE WHEN partial THEN 'true' ELSE 'false' END),
    'data_compress_ratio', data_compress_ratio,
    'steady', json(steady),
    'validity', json(validity))
WHERE status IN ('done', 'failed', 'cancelled');

ALTER TABLE runs DROP COLUMN files;
ALTER TABLE runs DROP COLUMN process_cpu_pct;
ALTER TABLE runs DROP COLUMN system_cpu_pct;
ALTER TABLE runs DROP COLUMN reader_busy_pct;
ALTER TABLE runs DROP COLUMN reader_wait_pct;
ALTER TABLE runs DROP COLUMN reader_waits;
ALTER TABLE runs DROP COLUMN writer_busy_pct;
ALTER TABLE runs DROP COLUMN writer_wait_pct;
ALTER TABLE runs DROP COLUMN writer_waits;
ALTER TABLE runs DROP COLUMN latency_p50_us;
ALTER TABLE runs DROP COLUMN latency_p99_us;
ALTER TABLE runs DROP COLUMN latency_max_us;
ALTER TABLE runs DROP COLUMN latency_of;
ALTER TABLE runs DROP COLUMN cache_resident_pct;
ALTER TABLE runs DROP COLUMN warnings;
ALTER TABLE runs DROP COLUMN error;
ALTER TABLE runs DROP COLUMN tape;
ALTER TABLE runs DROP COLUMN clients;
ALTER TABLE runs DROP COLUMN partial;
ALTER TABLE runs DROP COLUMN steady;
ALTER TABLE runs DROP COLUMN validity;
ALTER TABLE runs DROP COLUMN data_compress_ratio;
