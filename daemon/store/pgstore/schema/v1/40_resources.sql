-- The organizations' resources beside agents and runs: credentials and
-- pushed one-time codes, custom models, browser profiles and kept browser
-- states, browser sessions, schedules, scripts and uploaded files.
--
-- Every table starts with org_id, and every key includes it. doc is the
-- JSON document the bbolt store keeps for the record, byte for byte; the
-- other columns repeat only what queries filter, order or join on.
--
--   credentials       (org_id, id) -> doc: credentialRecord JSON, its secret sealed
--                     (store.CredentialAD); created_at orders, credential_type,
--                     name_lower and username_lower filter the list
--   totp_codes        (org_id, identifier, created_ns, id) -> doc: client.TOTPCode
--                     JSON; created_ns is CreatedAt in unix nanoseconds, so that
--                     the newest code of an identifier is the last key, as in bbolt
--   custom_llms       (org_id, id) -> doc: customLLMRecord JSON, its key sealed
--                     (store.CustomLLMAD); created_at orders
--   browser_profiles  (org_id, id) -> doc: profileRecord JSON, its state sealed
--                     (store.ProfileAD); created_at orders, deleted,
--                     name_lower and description_lower filter
--   browser_states    (org_id, key) -> sealed: key is the bbolt key, kind 0x00 id
--                     (kind store.StateOfRun, StateOfAgent or StateOfSession),
--                     bytea because the store never refuses the id of a run,
--                     agent or session here; sealed with store.BrowserStateAD
--   browser_sessions  (org_id, id) -> doc: client.BrowserSession JSON; status
--                     finds the running ones, created_at orders; daemon: the
--                     daemon (store.Queue owner) whose browser it is, set by
--                     Queue.HoldSession (NULL: not known)
--   schedules         (org_id, id) -> doc: ScheduleRecord JSON, whose times
--                     (handled_through, last_fire_time, ...) are read from the
--                     JSON only; agent_id, enabled filter, created_at orders
--   scripts           (org_id, id) -> doc: scriptRecord JSON; latest is its
--                     latest version, modified_at orders, agent_id and deleted
--                     filter
--   script_versions   (org_id, script_id, version) -> doc: scriptVersionRecord
--                     JSON without the content, content: script.yaml as it is
--   script_index      (org_id, agent_id, cache_key) -> script_id: the script runs
--                     of the agent with that cache key replay and record into
--                     (cache_key bytea: any bytes, as in bbolt's key)
--   uploads           (org_id, id) -> doc: store.Upload JSON

CREATE TABLE credentials (
    org_id          text NOT NULL REFERENCES organizations (id),
    id              text NOT NULL,
    created_at      timestamptz NOT NULL,
    credential_type text NOT NULL,
    name_lower      text NOT NULL,
    username_lower  text NOT NULL,
    doc             bytea NOT NULL,
    PRIMARY KEY (org_id, id)
);
CREATE INDEX credentials_order ON credentials (org_id, created_at DESC, id COLLATE "C" DESC);

CREATE TABLE totp_codes (
    org_id     text NOT NULL REFERENCES organizations (id),
    identifier text NOT NULL,
    created_ns bigint NOT NULL,
    id         text COLLATE "C" NOT NULL,
    doc        bytea NOT NULL,
    PRIMARY KEY (org_id, identifier, created_ns, id)
);

CREATE TABLE custom_llms (
    org_id     text NOT NULL REFERENCES organizations (id),
    id         text NOT NULL,
    created_at timestamptz NOT NULL,
    doc        bytea NOT NULL,
    PRIMARY KEY (org_id, id)
);

CREATE TABLE browser_profiles (
    org_id            text NOT NULL REFERENCES organizations (id),
    id                text NOT NULL,
    created_at        timestamptz NOT NULL,
    deleted           boolean NOT NULL,
    name_lower        text NOT NULL,
    description_lower text NOT NULL,
    doc               bytea NOT NULL,
    PRIMARY KEY (org_id, id)
);
CREATE INDEX browser_profiles_order ON browser_profiles (org_id, created_at DESC, id COLLATE "C" DESC);

CREATE TABLE browser_states (
    org_id text NOT NULL REFERENCES organizations (id),
    key    bytea NOT NULL,
    sealed bytea NOT NULL,
    PRIMARY KEY (org_id, key)
);

CREATE TABLE browser_sessions (
    org_id     text NOT NULL REFERENCES organizations (id),
    id         text NOT NULL,
    created_at timestamptz NOT NULL,
    status     text,
    doc        bytea NOT NULL,
    daemon     text,
    PRIMARY KEY (org_id, id)
);
CREATE INDEX browser_sessions_running ON browser_sessions (status) WHERE status = 'running';

CREATE TABLE schedules (
    org_id     text NOT NULL REFERENCES organizations (id),
    id         text NOT NULL,
    agent_id   text NOT NULL,
    enabled    boolean NOT NULL,
    created_at timestamptz NOT NULL,
    doc        bytea NOT NULL,
    PRIMARY KEY (org_id, id)
);
CREATE INDEX schedules_agent ON schedules (org_id, agent_id);
CREATE INDEX schedules_enabled ON schedules (enabled) WHERE enabled;

CREATE TABLE scripts (
    org_id      text NOT NULL REFERENCES organizations (id),
    id          text NOT NULL,
    agent_id    text NOT NULL,
    latest      integer NOT NULL,
    modified_at timestamptz NOT NULL,
    deleted     boolean NOT NULL DEFAULT false,
    doc         bytea NOT NULL,
    PRIMARY KEY (org_id, id)
);
CREATE INDEX scripts_order ON scripts (org_id, modified_at DESC);

CREATE TABLE script_versions (
    org_id    text NOT NULL REFERENCES organizations (id),
    script_id text NOT NULL,
    version   integer NOT NULL,
    doc       bytea NOT NULL,
    content   bytea NOT NULL,
    PRIMARY KEY (org_id, script_id, version)
);

CREATE TABLE script_index (
    org_id    text NOT NULL REFERENCES organizations (id),
    agent_id  text NOT NULL,
    cache_key bytea NOT NULL,
    script_id text NOT NULL,
    PRIMARY KEY (org_id, agent_id, cache_key)
);

CREATE TABLE uploads (
    org_id text NOT NULL REFERENCES organizations (id),
    id     text NOT NULL,
    doc    bytea NOT NULL,
    PRIMARY KEY (org_id, id)
);
