-- Each finished run's steady-state window and its validity (flags with evidence), as JSON.
ALTER TABLE runs ADD COLUMN steady TEXT;
ALTER TABLE runs ADD COLUMN validity TEXT;
-- The compressibility a target test's data was given, when measured on the source.
ALTER TABLE runs ADD COLUMN data_compress_ratio REAL;
