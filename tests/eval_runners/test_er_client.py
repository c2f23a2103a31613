import asyncio
import random
import time

import pytest

from er_chat_server import GARBAGE, HUGE_CHARS, MODES, Reply, completion, error
from eval_runners.client import (MAX_REPLY_CHARS, ChatClient, EndpointConfig, MemoryCache, clean_text,
                                 normalize_base_url, parse_completion, request_hash)
from eval_runners.pricing import PriceTable

KEY = "sk-test-SECRET-7f3a9c"
PRICES = PriceTable.from_mapping({"models": {"m": {"input": 2.0, "output": 8.0}}})
MSG = [{"role": "user", "content": "q1"}]


def run(coro):
    return asyncio.run(coro)


def cfg(url, **kw):
    base = dict(api_key=KEY, max_retries=4, backoff_base=0.01, backoff_max=0.05, timeout=5)
    base.update(kw)
    return EndpointConfig(url, **base)


async def one(url, msgs=MSG, params=None, cache=None, **kw):
    async with ChatClient(cfg(url, **kw), PRICES, cache=cache) as c:
        return await c.complete("m", msgs, params or {"max_tokens": 50})


@pytest.mark.parametrize("raw,want", [
    ("http://h:8000", "http://h:8000/v1"),
    ("http://h:8000/", "http://h:8000/v1"),
    ("http://h:8000/v1", "http://h:8000/v1"),
    ("http://h:8000/v1/", "http://h:8000/v1"),
    ("https://api.x.com/openai/v1", "https://api.x.com/openai/v1"),
    ("http://h/proxy", "http://h/proxy/v1"),
    ("http://h:1/v1/chat/completions", "http://h:1/v1"),
])
def test_normalize_base_url(raw, want):
    assert normalize_base_url(raw) == want


@pytest.mark.parametrize("suffix", ["", "/v1", "/v1/"])
def test_right_answer_tokens_cost_and_policy(chat_server, suffix):
    srv = chat_server(lambda b, s: completion("A", prompt_tokens=1000, completion_tokens=250))
    res = run(one(srv.url + suffix))
    assert res.ok and res.text == "A" and res.finish_reason == "stop"
    assert (res.prompt_tokens, res.completion_tokens, res.attempts) == (1000, 250, 1)
    assert res.cost_usd == pytest.approx(1000 * 2e-6 + 250 * 8e-6, abs=1e-15)   # 0.004
    req = srv.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["body"]["temperature"] == 0 and req["body"]["max_tokens"] == 50
    assert req["headers"]["authorization"] == f"Bearer {KEY}"


def test_retries_429_500_timeout_malformed(chat_server):
    seq = [error(429, "slow down", {"retry-after": "0"}), error(500, "boom"), error(503, "busy"),
           Reply(200, b'{"choices": [ broken'), Reply(200, completion("B").body, delay=1.0),
           completion("B", prompt_tokens=7, completion_tokens=3)]

    def script(body, srv):
        return seq[len(srv.requests) - 1]
    srv = chat_server(script)
    res = run(one(srv.url, max_retries=6, timeout=0.4))
    assert res.ok and res.text == "B"
    assert res.attempts == 6 and len(srv.requests) == 6
    assert (res.prompt_tokens, res.completion_tokens) == (7, 3)   # failed attempts are not billed
    assert res.cost_usd == pytest.approx(7 * 2e-6 + 3 * 8e-6, abs=1e-15)


def test_gives_up_and_redacts_key(chat_server):
    # a hostile proxy that echoes the credential into its error body
    srv = chat_server(lambda b, s: error(500, f"upstream said {s.requests[-1]['headers']['authorization']} {KEY}"))
    res = run(one(srv.url, max_retries=2))
    assert not res.ok and res.text is None and res.attempts == 3
    assert "InternalServerError" in res.error and KEY not in res.error and "***" in res.error
    assert res.prompt_tokens == 0 and res.cost_usd == 0.0


def test_non_retryable_error_stops(chat_server):
    srv = chat_server(lambda b, s: error(401, "bad key"))
    res = run(one(srv.url))
    assert not res.ok and res.attempts == 1 and "AuthenticationError" in res.error
    assert res.error_kind == "auth"


@pytest.mark.parametrize("mode,marker", [("surrogate", "\ufffd and \ufffd"), ("nul", "\ufffd\ufffd so"),
                                         ("invalid-utf8", "\ufffd\ufffd\ufffd so")])
def test_unencodable_reply_is_cleaned_not_raised(chat_server, mode, marker):
    """A reply holding a lone surrogate, NULs or invalid UTF-8 comes back as storable text."""
    srv = chat_server(MODES[mode])
    res = run(one(srv.url, msgs=[{"role": "user", "content": "AIME question 3: what is 3 + 100?"}]))
    assert res.ok and res.error is None
    assert marker in res.text and res.text.endswith("\\boxed{103}")
    res.text.encode("utf-8")                             # would raise on a lone surrogate
    assert "\x00" not in res.text and res.note and "U+FFFD" in res.note
    assert (res.prompt_tokens, res.completion_tokens) == (50, 10)


def test_huge_reply_cut_keeping_head_and_tail(chat_server):
    srv = chat_server(MODES["huge"])
    res = run(one(srv.url, msgs=[{"role": "user", "content": "AIME question 1: what is 1 + 100?"}]))
    assert res.ok and len(res.text) <= MAX_REPLY_CHARS < HUGE_CHARS
    assert res.text.startswith("xxx") and res.text.endswith("\\boxed{101}")      # the final answer survives
    assert "characters omitted by the runner" in res.text and "cut from" in res.note


def test_every_garbage_body_is_an_error_never_an_exception(chat_server):
    """HTML, empty, null, [], wrong shapes, content 42, truncated JSON, bad usage: no exception."""
    srv = chat_server(lambda b, s: Reply(200, GARBAGE[len(s.requests) - 1]))
    results = []
    for _ in GARBAGE:
        results.append(run(one(srv.url, max_retries=0)))
    assert len(srv.requests) == len(GARBAGE)
    *bad, last = results
    assert all(not r.ok and r.error_kind == "bad_reply" and r.text is None for r in bad)
    assert "not JSON" in bad[0].error and "content is int" in bad[5].error
    # a usable answer with nonsense token counts: kept, counted as 0 tokens, noted
    assert last.ok and last.text == "x" and last.prompt_tokens == 0 and "not a token count" in last.note


def test_garbage_is_retried_then_answered(chat_server):
    seq = [Reply(200, b"<html>oops</html>"), Reply(200, b'{"choices": []}'), completion("fine")]
    srv = chat_server(lambda b, s: seq[len(s.requests) - 1])
    res = run(one(srv.url))
    assert res.ok and res.text == "fine" and res.attempts == 3


def test_parse_and_clean_are_total():
    assert clean_text("a\ud800b\x00c") == ("a\ufffdb\ufffdc", ["1 lone surrogate(s) replaced by U+FFFD",
                                                                "1 NUL character(s) replaced by U+FFFD"])
    text, notes = clean_text("y" * 5000, 1000)
    assert len(text) <= 1000 and clean_text(text, 1000) == (text, [])           # idempotent
    body = b'{"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},' \
           b' "finish_reason": "stop"}], "usage": {"prompt_tokens": 3, "completion_tokens": 2}}'
    r = parse_completion(body)
    assert (r.text, r.finish_reason, r.prompt_tokens, r.completion_tokens) == ("ab", "stop", 3, 2)


@pytest.mark.parametrize("status,kind", [(401, "auth"), (403, "auth"), (404, "not_found")])
def test_refused_credentials_stop_every_other_call(chat_server, status, kind):
    """After a 401/403/404 no further request is sent: calls waiting to retry a 429 give up too."""
    def script(body, srv):
        return error(status, f"no access for {KEY}") if "q0" in body["messages"][-1]["content"] \
            else error(429, "later", {"retry-after": "30"})

    srv = chat_server(script)

    async def go():
        async with ChatClient(cfg(srv.url, max_retries=5, backoff_base=3600, backoff_max=3600), PRICES) as c:
            others = [asyncio.create_task(c.complete("m", [{"role": "user", "content": f"q{i}"}], {}))
                      for i in (1, 2)]
            while len(srv.requests) < 2:                 # both now wait an hour to retry their 429
                await asyncio.sleep(0.01)
            first = await c.complete("m", [{"role": "user", "content": "q0"}], {})
            later = await c.complete("m", [{"role": "user", "content": "q3"}], {})
            return first, await asyncio.gather(*others), later, c.stopped

    # without the stop, q1..q3 would each wait an hour: the bound turns that hang into a failure
    first, others, later, stopped = run(asyncio.wait_for(go(), 30))
    assert first.error_kind == kind and not first.ok
    assert all(r.error_kind == "aborted" and r.attempts == 1 for r in others)
    assert later.error_kind == "aborted" and later.attempts == 0
    assert len(srv.requests) == 3                        # q1, q2 once each, q0; nothing after the refusal
    assert f"{srv.url}/v1/chat/completions" in stopped and "'m'" in stopped and f"HTTP {status}" in stopped
    assert KEY not in stopped and KEY not in first.error


@pytest.mark.parametrize("reply,kind", [(error(429, "slow"), "rate_limit"), (error(500, "x"), "server"),
                                        (Reply(hang=True), "timeout"), (Reply(200, b"<html>"), "bad_reply"),
                                        (error(400, "context too long"), "bad_request")])
def test_error_kinds(chat_server, reply, kind):
    srv = chat_server(lambda b, s: reply)
    res = run(one(srv.url, max_retries=1, timeout=0.3))
    assert not res.ok and res.error_kind == kind


def test_temperature_rejected_dropped_and_remembered(chat_server):
    def script(body, srv):
        if "temperature" in body:
            return error(400, "Unsupported parameter: 'temperature' is not supported with this model.")
        return completion("C")
    srv = chat_server(script)

    async def go():
        async with ChatClient(cfg(srv.url), PRICES) as c:
            r1 = await c.complete("m", MSG, {"max_tokens": 10})
            r2 = await c.complete("m", [{"role": "user", "content": "q2"}], {"max_tokens": 10})
            return r1, r2
    r1, r2 = run(go())
    assert r1.ok and r2.ok and r1.attempts == 2 and r2.attempts == 1
    assert "temperature" not in r2.params_sent and len(srv.requests) == 3


def test_max_tokens_renamed_when_asked(chat_server):
    def script(body, srv):
        if "max_tokens" in body:
            return error(400, "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead.")
        return completion("D")
    srv = chat_server(script)
    res = run(one(srv.url))
    assert res.ok and res.params_sent["max_completion_tokens"] == 50 and "max_tokens" not in res.params_sent


def test_empty_reasoning_output_retried_once_with_bigger_budget(chat_server):
    def script(body, srv):
        if body["max_tokens"] == 50:
            return completion("", prompt_tokens=100, completion_tokens=50, finish_reason="length",
                              reasoning_tokens=50)
        return completion("E", prompt_tokens=100, completion_tokens=120, reasoning_tokens=100)
    srv = chat_server(script)
    res = run(one(srv.url))
    assert res.ok and res.text == "E" and res.attempts == 2
    assert [r["body"]["max_tokens"] for r in srv.requests] == [50, 200]
    assert (res.prompt_tokens, res.completion_tokens, res.reasoning_tokens) == (200, 170, 150)
    assert res.cost_usd == pytest.approx(200 * 2e-6 + 170 * 8e-6, abs=1e-15)


def test_empty_output_retried_only_once(chat_server):
    srv = chat_server(lambda b, s: completion("", finish_reason="length"))
    res = run(one(srv.url))
    assert res.ok and res.text == "" and res.attempts == 2 and len(srv.requests) == 2


def test_cache_hit_makes_no_request(chat_server):
    srv = chat_server(lambda b, s: completion("F"))
    cache = MemoryCache()
    r1 = run(one(srv.url, cache=cache))
    r2 = run(one(srv.url, cache=cache))
    assert r1.text == r2.text == "F" and r2.cached and len(srv.requests) == 1
    assert request_hash("m", MSG, {"max_tokens": 50}) in cache.data
    assert request_hash("m", MSG, {"max_tokens": 51}) != request_hash("m", MSG, {"max_tokens": 50})


def test_concurrency_and_rate_limit(chat_server):
    srv = chat_server(lambda b, s: Reply(200, completion("G").body, delay=0.2))

    async def go(**kw):
        async with ChatClient(cfg(srv.url, **kw), PRICES) as c:
            t = time.perf_counter()
            await asyncio.gather(*[c.complete("m", [{"role": "user", "content": f"p{i}"}], {})
                                   for i in range(6)])
            return time.perf_counter() - t
    elapsed = run(go(concurrency=2))
    assert 0.6 <= elapsed < 2.0                  # 3 waves of 2
    elapsed = run(go(concurrency=6, rate_limit=20))
    assert elapsed >= 0.25 + 0.2                 # starts spaced 50 ms apart


def test_backoff_full_jitter_bounds():
    c = ChatClient.__new__(ChatClient)
    c.config = EndpointConfig("http://x", backoff_base=1.0, backoff_max=8.0)
    c.rng = random.Random(0)
    for attempt in range(6):
        for _ in range(50):
            d = c.backoff(attempt)
            assert 0 <= d <= min(8.0, 2 ** attempt)
    assert c.backoff(0, retry_after=3.0) >= 3.0
    assert c.backoff(0, retry_after=100.0) <= 8.0
