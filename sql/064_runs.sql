-- Runner side: one row per `pace run` invocation. Never holds a credential (base_url is stored
-- without user-info or query string).
--   status: running | done (every call answered) | partial (some calls failed or were not run
--   because the run stopped) | failed (no call of this run succeeded) | stopped_budget (--max-cost
--   reached, nothing failed) | interrupted (the process died or was stopped: marked by the next
--   `pace run`, which finds its pid gone or its heartbeat stale).
-- pid, host and heartbeat_at identify the process and when it was last seen alive.
CREATE TABLE IF NOT EXISTS runs (
    run_id        VARCHAR PRIMARY KEY,
    model         VARCHAR NOT NULL,
    base_url      VARCHAR,
    started_at    TIMESTAMP NOT NULL,
    finished_at   TIMESTAMP,
    status        VARCHAR NOT NULL,
    n_planned     INTEGER,                 -- plan rows
    n_calls       INTEGER,                 -- distinct call units
    n_paid        INTEGER,                 -- calls answered by the endpoint in this run
    cost_usd      DOUBLE,
    options       VARCHAR                  -- JSON: concurrency, rate limit, max_cost, price table ...
);
-- Columns added after the first release; ADD ... IF NOT EXISTS migrates an older file forward.
ALTER TABLE runs ADD COLUMN IF NOT EXISTS n_failed INTEGER;      -- calls that ended in an error
ALTER TABLE runs ADD COLUMN IF NOT EXISTS n_not_run INTEGER;     -- calls left because the run stopped
ALTER TABLE runs ADD COLUMN IF NOT EXISTS detail VARCHAR;        -- why it failed / stopped, one line
ALTER TABLE runs ADD COLUMN IF NOT EXISTS pid INTEGER;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS host VARCHAR;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS pid_started VARCHAR;   -- process start tick (Linux), against pid reuse
ALTER TABLE runs ADD COLUMN IF NOT EXISTS heartbeat_at TIMESTAMP;
