-- Where a campaign's runs read and write, resolved at submission (JSON): a run executes its own
-- stored test and parameters at this placement instead of planning the whole spec again.
-- NULL for campaigns queued before it existed; their runs are planned from the spec.
ALTER TABLE campaigns ADD COLUMN plan TEXT;
