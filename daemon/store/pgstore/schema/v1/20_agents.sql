-- Agents, folders and tags.
--
--   agents          (org_id, wpid): one row per agent, what listing filters
--                   and orders on, derived from its latest version row
--                   (bbolt's agent_summaries and agent_order):
--                     version: the latest version, deleted ones counting
--                     created_at: the latest version's, the list's order
--                     folder_id ('' for none), status, saved_task, deleted
--                     search: the lowercased texts a search term matches
--                       besides the wpid and the folder's title (Go's
--                       lowercasing: the title, then each parameter's key,
--                       description and default value), one element each
--   agent_versions  (org_id, wpid, version) -> row: the client.Agent JSON as
--                   the API answers it, the bbolt store's bytes; beside it
--                   workflow_id and folder_id (NULL for none), which folder
--                   deletes and the scripts' lookups search
--   folders         (org_id, id) -> record: the folderRecord JSON (the
--                   bbolt store's bytes, workflow_count always 0); beside it
--                   the lowercased title and description for search,
--                   modified_at for the order and deleted. A folder's
--                   workflow_count is counted from agents.
--   tag_keys        (org_id, key): the registry's keys, with description
--   tag_values      (org_id, key, value): the registry's pairs, with colour
--   tags            (org_id, subject, key, label): the current tags of agents
--                   (wpid_) and workflow runs (wr_): a grouped tag has its
--                   key and label ''; a standalone label has key '' and label
--                   its value. This order (key, label) lists labels first,
--                   then grouped tags by key. event_seq names its SET event.
--   tag_events      (org_id, subject, seq) -> event: a client.TagEvent JSON,
--                   never deleted; a SET gets superseded_at when a later
--                   change replaces it. set_at and key are for the history's
--                   order and filters.
--
-- Texts the caller chose (folder ids, statuses, titles) are stored with a
-- NUL byte replaced by U+FFFD, which a PostgreSQL text cannot hold.

CREATE TABLE agents (
    org_id     text NOT NULL REFERENCES organizations (id),
    wpid       text COLLATE "C" NOT NULL,
    version    integer NOT NULL,
    created_at timestamptz NOT NULL,
    folder_id  text COLLATE "C" NOT NULL,
    status     text COLLATE "C" NOT NULL,
    saved_task boolean NOT NULL,
    deleted    boolean NOT NULL,
    search     text[] NOT NULL,
    PRIMARY KEY (org_id, wpid)
);

-- The list: newest first, wpids breaking ties byte by byte.
CREATE INDEX agents_list ON agents (org_id, created_at DESC, wpid DESC) WHERE NOT deleted;
-- Folder filters, counts and deletes.
CREATE INDEX agents_folder ON agents (org_id, folder_id);

CREATE TABLE agent_versions (
    org_id      text NOT NULL REFERENCES organizations (id),
    wpid        text COLLATE "C" NOT NULL,
    version     integer NOT NULL,
    workflow_id text COLLATE "C" NOT NULL,
    folder_id   text COLLATE "C",
    row         bytea NOT NULL,
    PRIMARY KEY (org_id, wpid, version)
);

CREATE INDEX agent_versions_folder ON agent_versions (org_id, folder_id) WHERE folder_id IS NOT NULL;
CREATE INDEX agent_versions_workflow ON agent_versions (org_id, workflow_id);

CREATE TABLE folders (
    org_id             text NOT NULL REFERENCES organizations (id),
    id                 text COLLATE "C" NOT NULL,
    record             bytea NOT NULL,
    title_search       text NOT NULL,
    description_search text,
    modified_at        timestamptz NOT NULL,
    deleted            boolean NOT NULL,
    PRIMARY KEY (org_id, id)
);

-- The list: most recently modified first, then ids in numeric order,
-- highest first.
CREATE INDEX folders_list ON folders (org_id, modified_at DESC, length(id) DESC, id DESC) WHERE NOT deleted;

CREATE TABLE tag_keys (
    org_id      text NOT NULL REFERENCES organizations (id),
    key         text COLLATE "C" NOT NULL,
    description text,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (org_id, key)
);

CREATE TABLE tag_values (
    org_id     text NOT NULL REFERENCES organizations (id),
    key        text COLLATE "C" NOT NULL,
    value      text COLLATE "C" NOT NULL,
    color      text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (org_id, key, value)
);

CREATE TABLE tags (
    org_id    text NOT NULL REFERENCES organizations (id),
    subject   text COLLATE "C" NOT NULL,
    key       text COLLATE "C" NOT NULL,
    label     text COLLATE "C" NOT NULL,
    value     text COLLATE "C" NOT NULL,
    source    text NOT NULL,
    set_at    timestamptz NOT NULL,
    set_by    text NOT NULL,
    event_seq bigint NOT NULL,
    PRIMARY KEY (org_id, subject, key, label)
);

-- Who carries a key or a (key, value) pair, and who carries a value in any
-- group or none: the tag filters and the registry's counts and cascades.
CREATE INDEX tags_by_key ON tags (org_id, key, value);
CREATE INDEX tags_by_value ON tags (org_id, value);

CREATE TABLE tag_events (
    org_id  text NOT NULL REFERENCES organizations (id),
    subject text COLLATE "C" NOT NULL,
    seq     bigint NOT NULL,
    set_at  timestamptz NOT NULL,
    key     text COLLATE "C",
    event   bytea NOT NULL,
    PRIMARY KEY (org_id, subject, seq)
);

-- The history: newest first, event ids breaking ties.
CREATE INDEX tag_events_history ON tag_events (org_id, subject, set_at DESC, seq DESC);
