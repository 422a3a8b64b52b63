-- Community proposals: a collection for a known standard name, or a collection's new
-- description; open until an administrator accepts or rejects it, the decision recorded
-- (who, when, why). Items published for a collection that does not exist yet wait in its
-- open proposal (`held_items`), read by their owner only, until the decision: accepted,
-- they go into the catalog as they asked; rejected, they stay held for their owner.

CREATE TABLE governance.proposals (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('collection', 'description')),
    collection_id text NOT NULL,
    description text,  -- what the proposer adds after the vocabulary's description
    comment text,  -- the proposer's why
    proposer text NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'accepted', 'rejected')),
    decided_by text,
    decided timestamptz,
    reason text,
    released int NOT NULL DEFAULT 0,  -- held items that went into the catalog on acceptance
    CHECK ((status = 'open') = (decided IS NULL)),
    CHECK (status = 'open' OR (decided_by IS NOT NULL AND reason IS NOT NULL))
);
-- one open proposal per collection to be made: publishing adds to it
CREATE UNIQUE INDEX proposals_open_collection_idx ON governance.proposals (collection_id)
    WHERE status = 'open' AND kind = 'collection';
CREATE INDEX proposals_status_idx ON governance.proposals (status, id);
CREATE INDEX proposals_proposer_idx ON governance.proposals (proposer, id);

CREATE TABLE governance.held_items (
    proposal_id bigint NOT NULL REFERENCES governance.proposals ON DELETE CASCADE,
    collection_id text NOT NULL,
    id text NOT NULL,
    owner text NOT NULL,
    content jsonb NOT NULL,  -- the item as the item rules made it, its visibility as asked
    -- the catalog of the owner's that publishing links it into once it is released
    catalog_pk bigint REFERENCES catalogs.catalogs (pk) ON DELETE SET NULL,
    held timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (collection_id, id)
);
CREATE INDEX held_items_proposal_idx ON governance.held_items (proposal_id, owner);
