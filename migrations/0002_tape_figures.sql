-- The figures of emulated tape drives, as JSON, for runs whose target is emulated tape.
ALTER TABLE runs ADD COLUMN tape TEXT;
