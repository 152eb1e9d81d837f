-- An adaptive search over a campaign's matrix: its state (budget, seed, why it stopped) and
-- whether it is still choosing runs. While it is, the campaign is running even when none of
-- its runs is queued: the next ones are being chosen.
ALTER TABLE campaigns ADD COLUMN search TEXT;
ALTER TABLE campaigns ADD COLUMN searching BIGINT NOT NULL DEFAULT 0;
