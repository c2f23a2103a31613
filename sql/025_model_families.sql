-- Model families for the leave-one-family-out split. Edit with `pace families set MODEL FAMILY`
-- (or plain SQL). A model without a row here belongs to the family named by the leading letters
-- of its name (Claude-4.5-Opus -> Claude, Qwen3-Coder -> Qwen): see the model_family view.
CREATE TABLE IF NOT EXISTS model_families (
    model   VARCHAR PRIMARY KEY,
    family  VARCHAR NOT NULL
);
