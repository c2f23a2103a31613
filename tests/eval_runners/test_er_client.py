import asyncio
import random
import time

import pytest

from er_chat_server import Reply, completion, error
from eval_runners.client import (ChatClient, EndpointConfig, MemoryCache, normalize_base_url,
                                 request_hash)
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
