-- What the list shows of a finished campaign besides its verdict line: the backup's figure and
-- the component named, as one JSON document written when the verdict is kept.
ALTER TABLE campaigns ADD COLUMN headline TEXT;
