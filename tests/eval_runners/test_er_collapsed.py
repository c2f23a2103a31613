"""`pace run` keeps the stored collapsed cells equal to their rule and the lake in step with `scores`
after every batch it stores: each batch's transaction recomputes the cells and marks the lake, which is
rewritten right after. A run killed before a batch's commit loses that batch only (nothing half
written); one killed between the commit and the lake leaves the mark, and the next write open finishes."""
import pytest

import eval_runners.writes
from er_helpers import KEY, aime_pack, aime_plan, aime_script
from eval_runners.packs import import_pack
from eval_runners.run import RunOptions, run_plan
from eval_runners.secrets import Credentials
from ingest import collapsed, derived
from ingest.lake import lake_drift, pending
from tests.helpers import Killed, kill_at
from warehouse.connect import connect
from ingest import score_store

CELL = ("m1", "aime25", "exact_match", "", "near_zero")


@pytest.fixture
def db(tmp_path):
    """aime25 as a source benchmark that three other models solve."""
    path = tmp_path / "w.duckdb"
    con = connect(path)
    import_pack(con, aime_pack(tmp_path))
    con.execute("INSERT INTO benchmarks VALUES ('aime25', 'source')")
    for model in ("a", "b", "c"):
        score_store.execute(con, """INSERT INTO scores SELECT ?, 'aime25', 'exact_match', i::VARCHAR, 1.0, 'exact_match',
                       'runner', 'run:x', now() FROM range(4) t(i)""", [model])
    derived.refresh(con)
    con.close()
    return path


def _run(con, chat_server):
    srv = chat_server(aime_script(wrong={0, 1, 2, 3}))          # a model whose answers never parse right
    return run_plan(con, "m1", aime_plan(), credentials=Credentials(srv.url, KEY, "flag"),
                    options=RunOptions(progress=False, backoff_base=0.01, backoff_max=0.02, timeout=5, max_retries=2))


def _cells(con):
    return set(con.execute("SELECT model, benchmark, subdir, facet, reason FROM collapsed_cells").fetchall())


def test_a_run_recomputes_the_cells_it_changed(db, chat_server):
    con = connect(db)
    assert _cells(con) == set()
    summary = _run(con, chat_server)
    assert summary.rows_written == 4
    assert _cells(con) == {CELL}
    assert derived.drift(con) == {} and not derived.is_stale(con)          # the cells and the summaries
    assert con.execute("SELECT n_rows FROM score_counts WHERE model = 'm1'").fetchall() == [(4,)]


def test_a_run_killed_between_commit_and_lake_is_finished_by_the_next_open(db, chat_server, monkeypatch):
    con = connect(db, )
    kill_at(monkeypatch, eval_runners.writes, "sync_lake")
    with pytest.raises(Killed):
        _run(con, chat_server)
    assert _cells(con) == {CELL} and not collapsed.is_stale(con)     # committed with the rows
    assert pending(con) == ["aime25"]                                # the lake step is marked, not done
    con.close()
    monkeypatch.undo()
    con = connect(db, )                                    # a write open finishes it
    assert pending(con) == [] and lake_drift(con) == {}
    con.close()


def test_a_run_killed_inside_a_batch_leaves_nothing_half_written(db, chat_server, monkeypatch):
    con = connect(db)
    kill_at(monkeypatch, eval_runners.writes, "refresh_derived")
    with pytest.raises(Killed):
        _run(con, chat_server)
    assert con.execute("SELECT count(*) FROM scores WHERE model = 'm1'").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM runner_calls").fetchone()[0] == 0
    assert _cells(con) == set() and derived.drift(con) == {} and not derived.is_stale(con)
    assert pending(con) == []
    con.close()
