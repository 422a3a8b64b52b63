-- What a job read and wrote. `staging`: the files its inputs reference, resolved at
-- submission as its caller (item, asset, href). `provenance`: once it ends, each input's
-- and output's href, size and checksum, and the items it published; kept when the job is
-- dismissed (its published files outlive it).
ALTER TABLE processes.jobs ADD COLUMN staging jsonb, ADD COLUMN provenance jsonb;
