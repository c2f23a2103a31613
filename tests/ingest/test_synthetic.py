"""Tests of the SYNTHETIC Pace-shaped tree generator (ingest/synthetic.py)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from ingest.synthetic import (
    ABILITIES,
    SYNTHETIC_MARKER,
    TARGETS,
    SyntheticSummary,
    describe,
    generate_tree,
)

EXPECTED_LEAVES = (
    ["bfcl/" + x for x in ("agentic_memory_kv", "agentic_memory_rec_sum", "agentic_memory_vector",
                           "agentic_web_search_base", "agentic_web_search_no_snippet")]
    + ["gaia"]
    + ["ifeval/" + x for x in ("inst_level_loose_acc", "inst_level_strict_acc",
                               "prompt_level_loose_acc", "prompt_level_strict_acc")]
    + ["lifbench/" + x for x in ("list-blur_offset_query_element", "list-blur_offset_query_id",
                                 "list-multi_query_id", "list-offset_query_element",
                                 "list-offset_query_id", "list-single_query_id",
                                 "multidoc-batch_label", "multidoc-find_dup_text",
                                 "onedoc-extract", "onedoc-qa", "onedoc-repeat")]
    + ["mmmu"]
    + ["planbench/" + x for x in ("task_1_plan_generation", "task_2_plan_optimality",
                                  "task_3_plan_verification", "task_4_plan_reuse",
                                  "task_5_plan_generalization", "task_6_replanning",
                                  "task_7_plan_execution", "task_8_1_goal_shuffling",
                                  "task_8_2_full_to_partial", "task_8_3_partial_to_full")]
    + [f"repobench/repobench_{s}_python_{m}" for s in ("if", "xff", "xfr")
       for m in ("codebleu", "edit_similarity", "exact_match")]
    + ["swebench", "swebench_multimodal", "swtbench", "visualpuzzles", "visualwebbench"]
)


def read_tree(root: Path) -> dict[str, list[tuple[str, float, str]]]:
    """rel path -> rows (id, score, metric); asserts the header of every file."""
    out = {}
    for f in sorted(root.rglob("*.csv")):
        lines = f.read_bytes().decode("utf-8").splitlines()
        assert lines[0] == "id,score,metric_name", f
        rows = []
        for line in lines[1:]:
            i, s, m = line.split(",")
            rows.append((i, float(s), m))
        out[f.relative_to(root).as_posix()] = rows
    return out


def leaf_of(rel: str) -> str:
    return rel.rsplit("/", 1)[0]


def model_of(rel: str) -> str:
    return rel.rsplit("/", 1)[1][: -len(".csv")]


def all_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


@pytest.fixture(scope="module")
def default_tree(tmp_path_factory) -> tuple[SyntheticSummary, dict]:
    root = tmp_path_factory.mktemp("syn") / "tree"
    summary = generate_tree(root, n_models=14, seed=0)
    return summary, read_tree(root)


def test_same_seed_gives_same_bytes_other_seed_differs(tmp_path):
    kw = dict(n_models=5, scale=0.2)
    a = generate_tree(tmp_path / "a", seed=3, **kw)
    b = generate_tree(tmp_path / "b", seed=3, **kw)
    c = generate_tree(tmp_path / "c", seed=4, **kw)
    ba, bb, bc = all_bytes(tmp_path / "a"), all_bytes(tmp_path / "b"), all_bytes(tmp_path / "c")
    assert ba == bb
    assert np.array_equal(a.abilities, b.abilities)
    assert a.expected_target_means == b.expected_target_means
    assert (a.n_files, a.n_rows) == (b.n_files, b.n_rows)
    assert ba != bc
    assert not np.array_equal(a.abilities, c.abilities)
    common = set(ba) & set(bc)
    assert sum(ba[k] != bc[k] for k in common) > len(common) // 2


def test_layout_leaves_header_and_scores(default_tree):
    s, files = default_tree
    assert s.leaves == sorted(EXPECTED_LEAVES)
    assert sorted({leaf_of(r) for r in files}) == s.leaves
    root = s.root
    for t in TARGETS:   # one-leaf targets: CSVs directly in the benchmark folder
        assert (root / t).is_dir()
        assert not [p for p in (root / t).iterdir() if p.is_dir()]
        assert sorted(model_of(r) for r in files if leaf_of(r) == t) == sorted(s.models)
    assert len(files) == s.n_files
    assert sum(len(v) for v in files.values()) == s.n_rows
    for rel, rows in files.items():
        assert rows, rel
        scores = np.array([r[1] for r in rows])
        assert np.all((scores >= 0.0) & (scores <= 1.0)), rel
        ids = [r[0] for r in rows]
        assert len(set(ids)) == len(ids), rel
        assert model_of(rel) in s.models
    assert 150_000 <= s.n_rows <= 260_000
    assert (root / "README.md").is_file()


def test_metric_names_follow_pace_conventions(default_tree):
    s, files = default_tree
    for rel, rows in files.items():
        leaf = leaf_of(rel)
        bench, _, sub = leaf.partition("/")
        metrics = {r[2] for r in rows}
        if bench in TARGETS:
            assert metrics == {"resolved"}
        elif bench == "planbench":
            assert metrics == {"llm_correct_binary" if sub.startswith("task_3") else "llm_correct"}
        elif bench == "repobench":
            suffix = next(m for m in ("codebleu", "edit_similarity", "exact_match")
                          if sub.endswith(m))
            assert metrics == {suffix}
        elif bench == "ifeval":
            assert metrics == {sub}
        elif bench == "lifbench":
            assert metrics == {"total_score"}
        elif bench == "bfcl":
            assert metrics == {"accuracy"}
        elif bench == "mmmu":
            assert metrics == {"mmmu_acc"}
        elif bench == "visualpuzzles":
            assert metrics == {"exact_match"}
        elif bench == "visualwebbench":
            assert metrics <= {"rouge_l", "f1", "correct"} and len(metrics) == 3
        else:  # pragma: no cover
            pytest.fail(f"unexpected leaf {leaf}")


def test_id_styles_are_not_string_sortable(default_tree):
    s, files = default_tree
    m = s.multimodal_models[0]
    vp = [r[0] for r in files[f"visualpuzzles/{m}.csv"]]
    assert vp[:11] == [f"visualpuzzles_{i}" for i in range(11)]
    assert sorted(vp) != vp
    pb = [r[0] for r in files[f"planbench/task_8_1_goal_shuffling/{s.models[0]}.csv"]]
    assert all(x.isdigit() for x in pb) and sorted(pb) != pb
    mm = [r[0] for r in files[f"mmmu/{m}.csv"]]
    assert mm[0] == "validation_Accounting_1"
    swe = {r[0] for rel, v in files.items() if leaf_of(rel) == "swebench" for r in v}
    assert all("__" in x and "-" in x for x in swe)
    swt = {r[0] for rel, v in files.items() if leaf_of(rel) == "swtbench" for r in v}
    assert swt <= swe   # as upstream, swtbench reuses swebench instance ids
    gaia = [r[0] for r in files[f"gaia/{s.models[0]}.csv"]]
    assert all(len(x) == 36 and x.count("-") == 4 for x in gaia)


def test_binary_continuous_and_ifeval_values(default_tree):
    s, files = default_tree
    allowed = {0.0, 1 / 3, 0.5, 2 / 3, 1.0}
    for m in s.models:
        for kind in ("strict", "loose"):
            rel = f"ifeval/inst_level_{kind}_acc/{m}.csv"
            if rel not in files:
                continue
            vals = {r[1] for r in files[rel]}
            assert vals <= allowed
            assert vals - {0.0, 1.0}
        strict = f"ifeval/inst_level_strict_acc/{m}.csv"
        loose = f"ifeval/inst_level_loose_acc/{m}.csv"
        if strict in files and loose in files:
            st = np.array([r[1] for r in files[strict]])
            lo = np.array([r[1] for r in files[loose]])
            assert np.all(lo >= st - 1e-12)
            pst = f"ifeval/prompt_level_strict_acc/{m}.csv"
            if pst in files:
                assert np.array_equal(np.array([r[1] for r in files[pst]]), (st == 1.0) * 1.0)
    for rel, rows in files.items():
        bench = rel.split("/")[0]
        vals = {r[1] for r in rows}
        if bench in TARGETS + ("planbench", "bfcl", "mmmu", "visualpuzzles") or \
                rel.split("/")[1].endswith("exact_match"):
            assert vals <= {0.0, 1.0}, rel
        if bench == "lifbench" or "codebleu" in rel or "edit_similarity" in rel:
            assert len(vals - {0.0, 1.0}) > 5, rel


def test_imperfections_present_by_default(default_tree):
    s, files = default_tree
    # vision benchmarks only for the multimodal subset
    for b in ("mmmu", "visualpuzzles", "visualwebbench"):
        have = sorted(model_of(r) for r in files if leaf_of(r) == b)
        assert have == s.multimodal_models
        assert 0 < len(have) < len(s.models)
    # recorded missing files really are absent; some gaps outside vision/planbench
    assert s.missing_files and not set(s.missing_files) & set(files)
    assert len(files) + len(s.missing_files) == len(s.models) * len(s.leaves)
    other = [r for r in s.missing_files
             if r.split("/")[0] not in ("mmmu", "visualpuzzles", "visualwebbench", "planbench")]
    assert 1 <= len(other) <= 2
    assert any(r.startswith("planbench/") for r in s.missing_files)
    # targets complete but with fewer rows for some models, esp. swebench_multimodal
    for t in TARGETS:
        assert not [r for r in s.missing_files if leaf_of(r) == t]
    full = s.rows_per_leaf["swebench_multimodal"]
    mm_rows = sorted(len(v) for r, v in files.items() if leaf_of(r) == "swebench_multimodal")
    assert mm_rows[0] < 0.6 * full and mm_rows[-1] == full
    assert any(len(v) < s.rows_per_leaf["gaia"] for r, v in files.items() if leaf_of(r) == "gaia")
    for rel, (k, n) in s.short_files.items():
        assert len(files[rel]) == k < n
    assert any(r.startswith("repobench/") for r in s.short_files)
    # line endings: both styles
    raw = {rel: (s.root / rel).read_bytes() for rel in files}
    crlf = {rel for rel, b in raw.items() if b"\r\n" in b}
    assert crlf == set(s.crlf_files)
    assert 0 < len(crlf) < len(raw)
    for rel in crlf:   # CRLF files are CRLF throughout
        assert raw[rel].count(b"\n") == raw[rel].count(b"\r\n")


def test_imperfections_absent_when_off(tmp_path):
    s = generate_tree(tmp_path / "t", n_models=6, seed=1, scale=0.3, missing_files=False,
                      missing_instances=False, crlf_fraction=0.0)
    files = read_tree(s.root)
    assert not s.missing_files and not s.short_files and not s.crlf_files
    assert len(files) == s.n_files == 6 * len(s.leaves)
    for rel, rows in files.items():
        assert len(rows) == s.rows_per_leaf[leaf_of(rel)], rel
        assert b"\r" not in (s.root / rel).read_bytes()


def source_means(s: SyntheticSummary, files) -> dict[str, float]:
    per = {m: [] for m in s.models}
    for rel, rows in files.items():
        if rel.split("/")[0] not in TARGETS:
            per[model_of(rel)].append(np.mean([r[1] for r in rows]))
    return {m: float(np.mean(v)) for m, v in per.items()}


@pytest.mark.parametrize("target", TARGETS)
def test_targets_carry_signal(default_tree, target):
    s, files = default_tree
    src = source_means(s, files)
    obs = {model_of(r): np.mean([x[1] for x in v]) for r, v in files.items()
           if leaf_of(r) == target}
    ms = s.models
    rho_src = spearmanr([obs[m] for m in ms], [src[m] for m in ms])[0]
    rho_true = spearmanr([obs[m] for m in ms], [s.expected_target_means[target][m] for m in ms])[0]
    assert rho_src > 0.5, (target, rho_src)
    assert rho_true > 0.8, (target, rho_true)


def test_summary_ground_truth_shapes(default_tree):
    s, _ = default_tree
    assert s.abilities.shape == (14, len(ABILITIES)) and s.ability_names == ABILITIES
    assert set(s.expected_target_means) == set(TARGETS)
    for t in TARGETS:
        vals = s.expected_target_means[t]
        assert set(vals) == set(s.models)
        assert all(0.0 < v < 1.0 for v in vals.values())
    assert len(set(s.models)) == 14


def test_scale_multiplies_rows(tmp_path):
    kw = dict(n_models=3, seed=2, missing_files=False, missing_instances=False)
    small = generate_tree(tmp_path / "s", scale=0.5, **kw)
    big = generate_tree(tmp_path / "b", scale=2.0, **kw)
    assert big.n_files == small.n_files
    assert 3.8 <= big.n_rows / small.n_rows <= 4.2
    assert all(big.rows_per_leaf[k] > small.rows_per_leaf[k] for k in small.rows_per_leaf)


def test_readme_marks_tree_synthetic(default_tree):
    s, _ = default_tree
    text = (s.root / "README.md").read_text()
    assert SYNTHETIC_MARKER in text
    assert "seed: 0" in text and "scale: 1.0" in text and "n_models=14" in text
    assert "missing_files=True" in text and "missing_instances=True" in text


def test_out_dir_must_be_empty_unless_overwriting_synthetic(tmp_path):
    kw = dict(n_models=2, scale=0.05)
    generate_tree(tmp_path / "t", **kw)
    with pytest.raises(FileExistsError):
        generate_tree(tmp_path / "t", **kw)
    s = generate_tree(tmp_path / "t", seed=1, overwrite=True, **kw)
    assert "seed: 1" in (s.root / "README.md").read_text()
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("not synthetic")
    with pytest.raises(FileExistsError):
        generate_tree(other, overwrite=True, **kw)
    assert (other / "keep.txt").exists()
    # a synthetic tree a user added files to: replacing it would delete them (it did, silently)
    (tmp_path / "t" / "NOTES.txt").write_text("mine")
    mine = tmp_path / "t" / "mybench" / "Handmade.csv"
    mine.parent.mkdir()
    mine.write_text("id,score,metric_name\nq1,1,acc\n")
    with pytest.raises(FileExistsError, match=r"NOTES.txt, mybench, mybench/Handmade.csv"):
        generate_tree(tmp_path / "t", seed=2, overwrite=True, **kw)
    assert (tmp_path / "t" / "NOTES.txt").read_text() == "mine" and mine.is_file()
    assert "seed: 1" in (tmp_path / "t" / "README.md").read_text()        # the earlier tree is untouched
    (tmp_path / "t" / "NOTES.txt").unlink()
    shutil.rmtree(mine.parent)
    generate_tree(tmp_path / "t", seed=2, n_models=3, scale=0.05, overwrite=True)   # its own files only: replaced
    generate_tree(tmp_path / "t", seed=3, overwrite=True, **kw)                    # a third model's files too


def test_describe_mentions_models_and_synthetic(default_tree):
    s, _ = default_tree
    text = describe(s)
    assert isinstance(text, str) and SYNTHETIC_MARKER in text
    assert all(m in text for m in s.models)
    assert f"rows={s.n_rows}" in text and f"files={s.n_files}" in text
