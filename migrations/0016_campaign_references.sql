-- Other tools' figures (fio, iperf3) imported beside a campaign's own, as JSON documents, in the
-- order they were imported; deleted with the campaign.
CREATE TABLE campaign_references (
    campaign_seq BIGINT NOT NULL REFERENCES campaigns (seq) ON DELETE CASCADE,
    imported_ms BIGINT NOT NULL,
    reference TEXT NOT NULL
);
CREATE INDEX campaign_references_by_campaign ON campaign_references (campaign_seq, imported_ms);
