-- Campaigns by what they measure (the spec without its name), to find the previous campaign of
-- the same spec: the one a new campaign's figures are compared with.
CREATE INDEX campaigns_by_spec ON campaigns (json_remove(spec, '$.name'), seq);
