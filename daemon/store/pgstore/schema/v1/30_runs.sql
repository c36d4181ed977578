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
--               owner, lease_until: the daemon that holds the run (took it
--                 from the shared queue, or took it over from a daemon that
--                 died) and until when its lease holds, by the database's
--                 clock; NULL: nobody holds it (pgstore/queue.go, the
--                 store.Queue)
--               session_id: the browser session the run executes in
--                 (RunRecord.BrowserSessionID; NULL: a browser of its own),
--                 which it never changes: the queue leaves such a run to
--                 the daemon that holds the session's browser
--               snowflake: the number after the id's last underscore (its
--                 snowflake, generated from id), so that the queue orders
--                 runs oldest first in SQL as records.CompareRunIDs does
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
    session_id  text,
    snowflake   numeric GENERATED ALWAYS AS (substring(id FROM '^.+_([0-9]+)$')::numeric) STORED,
    PRIMARY KEY (org_id, id)
);

-- The run list: newest first, ids breaking ties byte by byte.
CREATE INDEX runs_list ON runs (org_id, created_at DESC, id DESC);

-- The runs a daemon starting up must resume, end or send the webhook of.
CREATE INDEX runs_pending ON runs (org_id, id) WHERE pending;

-- The shared queue (added to schema v1 before its release, with the
-- snowflake column, the trigger below and the owner and lease_until
-- columns' use): the queued runs in the order Queue.Claim takes them
-- within an organization, and the runs daemons hold, which Claim counts
-- per organization and Renew extends per owner.
CREATE INDEX runs_queued ON runs (org_id, snowflake, id) WHERE status = 'queued';
CREATE INDEX runs_held ON runs (owner) WHERE owner IS NOT NULL;

-- A run that becomes claimable (queued and held by nobody: created queued,
-- queued again, or let go by the daemon that held it) is announced on the
-- channel abctl_runs_queued, so that idle daemons listening there
-- (Queue.Queued) claim it without polling. The notification is sent when
-- the writing transaction commits, and not at all if it rolls back.
CREATE FUNCTION runs_notify_queued() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('abctl_runs_queued', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER runs_queued_insert AFTER INSERT ON runs
    FOR EACH ROW WHEN (NEW.status = 'queued' AND NEW.owner IS NULL)
    EXECUTE FUNCTION runs_notify_queued();

CREATE TRIGGER runs_queued_update AFTER UPDATE OF status, owner ON runs
    FOR EACH ROW WHEN (NEW.status = 'queued' AND NEW.owner IS NULL
        AND (OLD.status <> 'queued' OR OLD.owner IS NOT NULL))
    EXECUTE FUNCTION runs_notify_queued();

-- The daemons sharing the database, as far as the queue knows them: each
-- one's owner id (store.Queue) and until when it is alive, which its Renew
-- extends as it extends its leases. The queue leaves a run that executes
-- in a browser session to the daemon holding the session while that daemon
-- is alive (browser_sessions.daemon). Rows of daemons long gone are
-- deleted by TakeOver.
CREATE TABLE daemons (
    owner       text PRIMARY KEY,
    alive_until timestamptz NOT NULL
);

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
