-- A network backup's per-client figures, as JSON, and whether some clients failed.
ALTER TABLE runs ADD COLUMN clients TEXT;
ALTER TABLE runs ADD COLUMN partial INTEGER NOT NULL DEFAULT 0;
