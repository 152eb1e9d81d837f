-- A finished campaign's judgement (its points and the verdict on them, with the version of the
-- judging rules), kept as one JSON document when the campaign is judged: pages, reports and the
-- API read it instead of judging again.
ALTER TABLE campaigns ADD COLUMN judgement TEXT;
