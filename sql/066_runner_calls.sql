-- Runner side: grading state of one call unit for one model. A row is written in the same
-- transaction as the call's `scores` rows, so a crash never leaves scores without this marker
-- (or the reverse). status: ok | unscorable (grader could not parse; no score row, never a
-- silent 0) | grader_error.
CREATE TABLE IF NOT EXISTS runner_calls (
    model           VARCHAR NOT NULL,
    benchmark       VARCHAR NOT NULL,
    subdir          VARCHAR NOT NULL,
    instance_id     VARCHAR NOT NULL,
    request_hash    VARCHAR NOT NULL,
    run_id          VARCHAR NOT NULL,
    grader          VARCHAR NOT NULL,
    grader_version  VARCHAR NOT NULL,
    status          VARCHAR NOT NULL,
    detail          VARCHAR,
    n_rows          INTEGER,
    graded_at       TIMESTAMP NOT NULL,
    PRIMARY KEY (model, benchmark, subdir, instance_id)
);
