"""bench/workdir.py: a bench replaces only what it wrote in its --work folder (scale, import_invariance and
the anchors walkthrough rmtree their own subfolders there)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[1] / "bench"))   # after the repo: bench/ingest.py is a script
from workdir import claim  # noqa: E402


def test_a_users_folder_is_refused_and_left_untouched(tmp_path):
    mine = tmp_path / "mine"
    (mine / "a").mkdir(parents=True)
    (mine / "a" / "notes.txt").write_text("keep me")
    with pytest.raises(SystemExit, match="holds files this bench did not write"):
        claim(mine, "pace-import-invariance")
    assert (mine / "a" / "notes.txt").read_text() == "keep me" and sorted(p.name for p in mine.iterdir()) == ["a"]


def test_another_benchs_folder_is_refused(tmp_path):
    claim(tmp_path / "w", "pace-scale-work")
    (tmp_path / "w" / "tree-100").mkdir()
    with pytest.raises(SystemExit):
        claim(tmp_path / "w", "pace-anchors-walkthrough")


def test_a_new_empty_or_own_folder_is_claimed(tmp_path):
    assert claim(tmp_path / "new" / "deep", "b").is_dir()
    (tmp_path / "empty").mkdir()
    claim(tmp_path / "empty", "b")
    (tmp_path / "empty" / "wh-100").mkdir()                    # what the bench wrote on its first run
    assert claim(tmp_path / "empty", "b") == tmp_path / "empty"
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit, match="is a file"):
        claim(tmp_path / "file", "b")
