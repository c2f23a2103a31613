"""The runner cannot be turned against its user: a redirect never carries a prompt to another host,
nothing shaped like a credential is stored, prices cannot be negative, and the key never travels in
the URL. Against the real HTTP test server on 127.0.0.1 (a second server on another port stands for
the other host)."""
import asyncio
import json

import duckdb
import pytest

from er_chat_server import Reply, completion, error
from er_helpers import KEY, aime_pack, aime_plan
from eval_runners.client import ChatClient, EndpointConfig, normalize_base_url
from eval_runners.packs import import_pack
from eval_runners.plan import write_plan_csv
from eval_runners.pricing import Price, PriceTable
from eval_runners.run import RunOptions, run_plan
from eval_runners.secrets import Credentials, redact
from tests.helpers import run_pace
from warehouse.connect import connect
from warehouse.export import scrubbed

MSG = [{"role": "user", "content": "the SECRET PROMPT"}]


async def _one(url, **kw):
    cfg = EndpointConfig(url, api_key=KEY, max_retries=2, backoff_base=0.01, backoff_max=0.02, timeout=5, **kw)
    async with ChatClient(cfg) as client:
        res = await client.complete("m", MSG, {"max_tokens": 5})
        return res, client


def _redirect_to(url):
    return lambda body, srv: Reply(307, b"", {"location": url})


def test_redirect_to_another_port_is_refused_and_nothing_is_sent_there(chat_server):
    other = chat_server(lambda b, s: completion("the other host answered"))
    redirecting = chat_server(_redirect_to(other.url + "/v1/chat/completions"))
    res, client = asyncio.run(_one(redirecting.url))
    assert other.requests == []                                    # the prompt never left for it
    assert not res.ok and res.error_kind == "redirect" and res.text is None
    host = other.url.split("//")[1]
    assert host in res.error and "not followed" in res.error and KEY not in res.error
    assert client.stopped and host in client.stopped               # fatal: no later call is sent
    assert len(redirecting.requests) == 1


def test_redirect_within_the_same_origin_is_followed(chat_server):
    def script(body, srv):
        if srv.requests[-1]["path"].startswith("/v1/"):
            return Reply(307, b"", {"location": "/moved/v1/chat/completions"})
        return completion("moved here")
    srv = chat_server(script)
    res, _ = asyncio.run(_one(srv.url))
    assert res.ok and res.text == "moved here"
    assert [r["path"] for r in srv.requests] == ["/v1/chat/completions", "/moved/v1/chat/completions"]


def test_redirect_to_another_host_stops_the_run_with_one_line(tmp_path, chat_server):
    other = chat_server(lambda b, s: completion("stolen"))
    redirecting = chat_server(_redirect_to(other.url.replace("127.0.0.1", "localhost") + "/v1/chat/completions"))
    db = tmp_path / "w.duckdb"
    con = connect(db, )
    import_pack(con, aime_pack(tmp_path, 3))
    con.close()
    write_plan_csv(tmp_path / "plan.csv", aime_plan(3))
    r = run_pace("run", "m1", "--db", db, "--plan", tmp_path / "plan.csv", "--base-url", redirecting.url,
                 "--api-key", KEY, "--concurrency", "1", env={"COLUMNS": "300"})
    assert r.exit_code == 1 and other.requests == [] and len(redirecting.requests) == 1
    lines = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    host = "localhost:" + other.url.rsplit(":", 1)[1]
    assert len(lines) == 1 and host in lines[0] and "not followed" in lines[0], r
    assert KEY not in r.output
    con = connect(db, read_only=True)
    assert con.execute("SELECT status, n_failed, n_not_run FROM runs").fetchall() == [("failed", 1, 2)]
    assert con.execute("SELECT error_kind FROM responses").fetchall() == [("redirect",)]
    con.close()


def test_a_run_on_a_copy_of_the_database_file_calls_nothing(tmp_path, small_tree, chat_server):
    """`cp pace.duckdb copy.duckdb` and run on the copy: its lake is the original's, so the run is refused
    before the first call (it paid for calls, stored some, then stopped at the lake, the run left 'running')."""
    srv = chat_server(lambda b, s: completion("42"))
    db = tmp_path / "pace.duckdb"
    assert run_pace("ingest", small_tree, "--db", db, "--no-progress").exit_code == 0
    con = connect(db)
    import_pack(con, aime_pack(tmp_path, 3))
    con.close()
    write_plan_csv(tmp_path / "plan.csv", aime_plan(3))
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(db.read_bytes())
    r = run_pace("run", "m1", "--db", copy, "--plan", tmp_path / "plan.csv", "--base-url", srv.url, "--api-key", KEY)
    assert r.exit_code == 2 and "is a copy of that warehouse" in r.stderr, r
    assert srv.requests == []
    con = connect(copy, read_only=True)
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    con.close()


# ------------------------------------------------------------------------------------ redaction
LEAKY = ("Authorization: Basic dXNlcjpwYXNzd29yZA== | api-key: abcdef1234567890 | x-api-key: zzzz9999yyyy | "
         "Bearer eyJhbGciOi.xyz | sk-proj-abcdefghijklmnop1234 | https://u:hunter2@h.example/x?key=AIzaSyD123 | "
         '{"password": "pa55word"}')
SECRETS = ("dXNlcjpwYXNzd29yZA", "abcdef1234567890", "zzzz9999yyyy", "eyJhbGciOi", "abcdefghijklmnop1234",
           "hunter2", "AIzaSyD123", "pa55word")


def test_redact_removes_every_credential_shape_and_keeps_plain_words():
    out = redact(LEAKY)
    assert not [s for s in SECRETS if s in out], out
    assert "Authorization: Basic ***" in out and "api-key: ***" in out and "x-api-key: ***" in out
    assert "Bearer ***" in out and "sk-***" in out and "https://h.example/x?key=***" in out
    plain = "Basic arithmetic, the key idea: an sk-learn estimator and the API key concept (Bearer of news)"
    assert redact(plain) == plain                                      # no credential shape, nothing lost
    assert redact(out) == out                                          # idempotent


def test_export_scrubs_with_the_same_patterns_in_sql():
    """One list of patterns: DuckDB's RE2 reads each of them and gives what Python's re gives."""
    from eval_runners.secrets import CREDENTIAL_PATTERNS
    assert len(CREDENTIAL_PATTERNS) >= 7
    got = duckdb.connect().execute(f"SELECT {scrubbed('?::VARCHAR')}", [LEAKY]).fetchone()[0]
    assert got == redact(LEAKY)


def test_credentials_in_a_reply_or_an_error_are_never_stored(tmp_path, chat_server):
    def script(body, srv):
        i = int(body["messages"][-1]["content"].split("question ")[1].split(":")[0])
        if i == 2:
            return error(400, f"bad request, you sent {LEAKY}")
        return completion(f"I saw {LEAKY} somewhere; so \\boxed{{{i + 100}}}")
    srv = chat_server(script)
    con = connect(tmp_path / "w.duckdb", )
    import_pack(con, aime_pack(tmp_path, 3))
    summary = run_plan(con, "m1", aime_plan(3), credentials=Credentials(srv.url, KEY, "flag"),
                       options=RunOptions(progress=False, timeout=5, max_retries=0))
    assert summary.paid_calls == 2 and summary.failed_calls == 1
    assert con.execute("SELECT count(*), sum(score) FROM scores").fetchone() == (2, 2.0)   # still graded
    con.close()
    stored = (tmp_path / "w.duckdb").read_bytes()
    leaked = [s for s in SECRETS if s.encode() in stored]
    assert not leaked and KEY.encode() not in stored
    assert not [s for s in SECRETS if s in json.dumps(summary.to_dict())]


# --------------------------------------------------------------------------------------- prices
@pytest.mark.parametrize("bad", [-5, -0.0001, float("inf"), float("nan"), "1.5", True, None])
def test_a_price_must_be_a_finite_number_at_least_zero(bad):
    with pytest.raises(ValueError) as info:
        PriceTable.from_mapping({"models": {"m1": {"input": 1.0, "output": bad}}}, source="p.json")
    message = str(info.value)
    assert message.startswith("p.json: models.m1: output price") and "finite number >= 0" in message
    assert "\n" not in message


def test_zero_and_positive_prices_cost_what_they_say():
    table = PriceTable.from_mapping({"models": {"m1": {"input": 0, "output": 2}}})
    assert table.cost("m1", 1000, 500) == pytest.approx(0.001)
    with pytest.raises(ValueError):
        Price(-1.0, 1.0)


def test_cli_negative_price_is_one_line_naming_the_file_and_entry(tmp_path, chat_server):
    srv = chat_server(lambda b, s: completion("x"))
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"models": {"m1": {"input": -5, "output": 1}}}))
    connect(tmp_path / "w.duckdb", ).close()
    r = run_pace("run", "m1", "--db", tmp_path / "w.duckdb", "--prices", prices, "--base-url", srv.url,
                 "--api-key", KEY)
    assert r.exit_code == 2 and srv.requests == []
    assert r.stderr.strip() == (f"error: --prices {prices}: models.m1: input price -5 is not a price "
                                "(USD per 1M tokens: a finite number >= 0)")


# ------------------------------------------------------------------------ credentials in the URL
@pytest.mark.parametrize("url", ["http://user:pw-SECRET@127.0.0.1:9/v1", "http://tok-SECRET@127.0.0.1:9",
                                 "https://api.example/v1?api-key=pw-SECRET", "https://api.example?key=pw-SECRET"])
def test_credentials_in_the_base_url_are_refused(url):
    with pytest.raises(ValueError) as info:
        normalize_base_url(url)
    assert "SECRET" not in str(info.value) and "--api-key or API_KEY" in str(info.value)


def test_cli_base_url_with_user_password_sends_nothing(tmp_path, chat_server):
    srv = chat_server(lambda b, s: completion("x"))
    db = tmp_path / "w.duckdb"
    con = connect(db, )
    import_pack(con, aime_pack(tmp_path, 2))
    con.close()
    write_plan_csv(tmp_path / "plan.csv", aime_plan(2))
    url = srv.url.replace("http://", "http://user:pw-SECRET@")
    r = run_pace("run", "m1", "--db", db, "--plan", tmp_path / "plan.csv", "--base-url", url, "--api-key", KEY)
    assert r.exit_code == 2 and srv.requests == [] and "SECRET" not in r.output
    assert r.stderr.startswith("error: --base-url (or BASE_URL): the base URL ") and r.stderr.count("\n") == 1
    assert "--api-key or API_KEY" in r.stderr
