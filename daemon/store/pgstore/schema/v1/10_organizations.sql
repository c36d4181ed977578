-- The store's own records and the organizations with their API keys.

CREATE TABLE meta (
    key   text PRIMARY KEY,  -- secret_check, run_view_format
    value bytea NOT NULL
);

-- Each Open takes the next number as the worker of its snowflake ids.
CREATE SEQUENCE worker_numbers MINVALUE 0 MAXVALUE 2097151 START 0 CYCLE;

CREATE TABLE organizations (
    id         text PRIMARY KEY,
    name       text NOT NULL,
    created_at timestamptz NOT NULL
);

-- API keys by their SHA-256; the key itself is never stored, only sealed
-- under the store's secret (NULL without one) for signing webhooks.
CREATE TABLE api_keys (
    sha256     bytea PRIMARY KEY,
    org_id     text NOT NULL REFERENCES organizations (id),
    created_at timestamptz NOT NULL,
    sealed     bytea
);
