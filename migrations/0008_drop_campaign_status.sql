-- A campaign's status is worked out by the store's campaign query, in the same pass as its run
-- counts; the view that wrote the same rule a second time goes.
DROP VIEW IF EXISTS campaign_status;
