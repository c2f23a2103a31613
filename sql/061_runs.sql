-- Runner side: one row per `pace run` invocation. Never holds a credential (base_url is stored
-- without user-info or query string).
CREATE TABLE IF NOT EXISTS runs (
    run_id        VARCHAR PRIMARY KEY,
    model         VARCHAR NOT NULL,
    base_url      VARCHAR,
    started_at    TIMESTAMP NOT NULL,
    finished_at   TIMESTAMP,
    status        VARCHAR NOT NULL,        -- running | done | stopped_budget | failed
    n_planned     INTEGER,                 -- plan rows
    n_calls       INTEGER,                 -- distinct call units
    n_paid        INTEGER,                 -- API calls made by this run
    cost_usd      DOUBLE,
    options       VARCHAR                  -- JSON: concurrency, rate limit, max_cost, price table ...
);
