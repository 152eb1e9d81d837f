-- The series a campaign belongs to (the one its spec names, else the key of its spec, its name
-- aside): its history is read by this key, newest first.
ALTER TABLE campaigns ADD COLUMN series TEXT;
CREATE INDEX campaigns_by_series ON campaigns (series, seq);
