-- Each finished run's steady-state window and its validity (flags with evidence), as JSON.
ALTER TABLE runs ADD COLUMN steady TEXT;
ALTER TABLE runs ADD COLUMN validity TEXT;
