-- Runner side: one prompt payload per call unit, loaded from versioned instance packs
-- (`pace instances import PACK`). (benchmark, subdir, instance_id) is the *call* key of the
-- benchmark's registry entry: e.g. ifeval rows use subdir '' (its four metric subdirs share one
-- call) and repobench rows use the subtask ('repobench_if_python'). messages/reference/
-- grader_config/generation/requires hold JSON text; images are references (path + sha256)
-- resolved against asset_root at request time. Nothing here is downloaded at run time.
CREATE TABLE IF NOT EXISTS instances (
    benchmark      VARCHAR NOT NULL,
    subdir         VARCHAR NOT NULL,
    instance_id    VARCHAR NOT NULL,
    pack           VARCHAR NOT NULL,       -- pack name
    pack_version   VARCHAR NOT NULL,
    messages       VARCHAR NOT NULL,       -- JSON: chat messages (image parts by reference + hash)
    reference      VARCHAR,                -- JSON: gold answer / tests / grader payload
    grader         VARCHAR NOT NULL,       -- grader name (eval_runners.graders)
    grader_config  VARCHAR,                -- JSON
    generation     VARCHAR,                -- JSON: per-instance generation params (max_tokens, ...)
    asset_root     VARCHAR,                -- directory image references are relative to
    content_hash   VARCHAR NOT NULL,       -- sha256 of the canonical record
    imported_at    TIMESTAMP NOT NULL,
    PRIMARY KEY (benchmark, subdir, instance_id)
);
