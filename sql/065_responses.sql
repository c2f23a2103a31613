-- Runner side: every model response, stored as soon as it arrives; it doubles as the response
-- cache, keyed by request_hash = sha256(model, messages, requested params). A rerun finds the
-- stored response and pays nothing. A failed call is stored with `error` set and no text, and is
-- retried by the next run (the row is replaced). Text is stored cleaned: lone surrogates and NULs
-- become U+FFFD, a reply longer than about 1M characters keeps its head and tail; `note` says what
-- was changed.
CREATE TABLE IF NOT EXISTS responses (
    request_hash       VARCHAR PRIMARY KEY,
    run_id             VARCHAR NOT NULL,
    model              VARCHAR NOT NULL,
    benchmark          VARCHAR NOT NULL,
    subdir             VARCHAR NOT NULL,   -- call key (see instances)
    instance_id        VARCHAR NOT NULL,
    params             VARCHAR,            -- JSON: requested params
    params_sent        VARCHAR,            -- JSON: params of the final attempt after the policy
    response_text      VARCHAR,
    finish_reason      VARCHAR,
    prompt_tokens      BIGINT,
    completion_tokens  BIGINT,
    reasoning_tokens   BIGINT,
    latency_s          DOUBLE,
    cost_usd           DOUBLE,             -- NULL when the model has no price
    attempts           INTEGER,
    error              VARCHAR,            -- redacted; NULL on success
    grader             VARCHAR,
    grader_version     VARCHAR,
    created_at         TIMESTAMP NOT NULL
);
-- Columns added after the first release; ADD ... IF NOT EXISTS migrates an older file forward.
ALTER TABLE responses ADD COLUMN IF NOT EXISTS error_kind VARCHAR;  -- auth | rate_limit | timeout | bad_reply | ...
ALTER TABLE responses ADD COLUMN IF NOT EXISTS note VARCHAR;        -- what cleaning changed in the reply
