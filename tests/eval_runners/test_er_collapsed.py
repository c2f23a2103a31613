"""`pace run` keeps the stored collapsed cells equal to their rule: it marks them stale before the first
call and recomputes them after the last; a run killed in between leaves the mark, and the next open
recomputes."""
import pytest

import eval_runners.run
from er_helpers import KEY, aime_pack, aime_plan, aime_script
from eval_runners.packs import import_pack
from eval_runners.run import RunOptions, run_plan
from eval_runners.secrets import Credentials
from ingest import collapsed
from tests.helpers import Killed, kill_at
from warehouse.connect import connect

CELL = ("m1", "aime25", "exact_match", "", "near_zero")


@pytest.fixture
def db(tmp_path):
    """aime25 as a source benchmark that three other models solve."""
    path = tmp_path / "w.duckdb"
    con = connect(path)
    import_pack(con, aime_pack(tmp_path))
    con.execute("INSERT INTO benchmarks VALUES ('aime25', 'source')")
    for model in ("a", "b", "c"):
        con.execute("""INSERT INTO scores SELECT ?, 'aime25', 'exact_match', i::VARCHAR, 1.0, 'exact_match',
                       'runner', 'run:x', now() FROM range(4) t(i)""", [model])
    collapsed.refresh(con)
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
    assert collapsed.drift(con) == {} and not collapsed.is_stale(con)


def test_a_run_killed_before_recomputing_is_finished_by_the_next_open(db, chat_server, monkeypatch):
    con = connect(db)
    kill_at(monkeypatch, eval_runners.run, "refresh_collapsed_stale")
    with pytest.raises(Killed):
        _run(con, chat_server)
    assert collapsed.is_stale(con) and _cells(con) == set()      # rows committed, cells not recomputed yet
    con.close()
    con = connect(db, read_only=True)
    assert _cells(con) == {CELL}
    assert collapsed.drift(con) == {} and not collapsed.is_stale(con)
