-- A finished campaign's verdict in one line, stored when it finishes (or the first time a list
-- shows it), so the campaign list reads it instead of judging every campaign again.
ALTER TABLE campaigns ADD COLUMN verdict TEXT;
