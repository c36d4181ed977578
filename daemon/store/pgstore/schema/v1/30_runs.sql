-- Runs, their steps and their block executions.
--
--   runs        (org_id, id) -> record: the run's RunRecord, the JSON bytes
--               the bbolt store keeps; view: the bytes Options.RunViews
--               made of it at its last write (NULL: none). Beside them, the
--               list's columns, rewritten at every write of the run:
--                 status, type, trigger, created_at, started_at,
--                 finished_at: what a list item shows, in columns so that
--                   the list neither decodes records nor filters in Go
--                 title, agent_id: bytea, since they are the caller's
--                   strings and may hold any bytes (a NUL, invalid UTF-8)
--                 search: the lowercased id, title and agent id (Go's
--                   lowercasing), each its own element, so that a search
--                   term never matches across two of them
--               pending: the run is not terminal, or its webhook is still
--                 to be sent (bbolt's runs_pending), for Runs.Pending
--               owner, lease_until: unused yet; they will name the daemon
--                 that took a queued run (FOR UPDATE SKIP LOCKED) and until
--                 when its claim holds
--   run_steps   (org_id, run_id, n) -> step: a client.RunStep as
--               GET /v1/runs/{id}/steps answers it; the newest
--               store.MaxRunSteps numbers of a run are kept
--   run_blocks  (org_id, run_id, n) -> block: a client.RunBlock; the newest
--               store.MaxRunBlocks numbers of a run are kept
--
-- The views' Format is meta's run_view_format.

CREATE TABLE runs (
    org_id      text NOT NULL REFERENCES organizations (id),
    id          text COLLATE "C" NOT NULL,
    record      bytea NOT NULL,
    view        bytea,
    status      text NOT NULL,
    type        text NOT NULL,
    trigger     text NOT NULL,
    title       bytea NOT NULL,
    agent_id    bytea NOT NULL,
    created_at  timestamptz NOT NULL,
    started_at  timestamptz,
    finished_at timestamptz,
    search      bytea[] NOT NULL,
    pending     boolean NOT NULL,
    owner       text,
    lease_until timestamptz,
    PRIMARY KEY (org_id, id)
);

-- The run list: newest first, ids breaking ties byte by byte.
CREATE INDEX runs_list ON runs (org_id, created_at DESC, id DESC);

-- The runs a daemon starting up must resume, end or send the webhook of.
CREATE INDEX runs_pending ON runs (org_id, id) WHERE pending;

CREATE TABLE run_steps (
    org_id text NOT NULL,
    run_id text COLLATE "C" NOT NULL,
    n      bigint NOT NULL,
    step   bytea NOT NULL,
    PRIMARY KEY (org_id, run_id, n),
    FOREIGN KEY (org_id, run_id) REFERENCES runs (org_id, id) ON DELETE CASCADE
);

CREATE TABLE run_blocks (
    org_id text NOT NULL,
    run_id text COLLATE "C" NOT NULL,
    n      bigint NOT NULL,
    block  bytea NOT NULL,
    PRIMARY KEY (org_id, run_id, n),
    FOREIGN KEY (org_id, run_id) REFERENCES runs (org_id, id) ON DELETE CASCADE
);
