"""One async chat-completions client for every benchmark; it knows nothing of benchmarks.

* ``AsyncOpenAI`` with ``max_retries=0``: retries are ours (full jitter, ``Retry-After`` honoured)
  on 429, 5xx, timeouts, connection errors and malformed response bodies, so they are testable.
* base URL normalised: ``http://host:8000`` and ``http://host:8000/v1/`` both become ``.../v1``.
* per-endpoint concurrency (semaphore) and rate limit (minimum spacing of request starts).
* one parameter policy: ``temperature=0`` unless the caller says otherwise; a parameter the model
  rejects (400 naming it) is dropped, remembered for that model and the call repeated at no
  retry cost; ``max_tokens`` is renamed ``max_completion_tokens`` when the endpoint asks for it;
  an empty answer cut off by the length limit (a reasoning model that spent its budget thinking)
  is retried once with ``reasoning_retry_factor`` x the budget.
* a response cache keyed by :func:`request_hash` (model, messages, requested params).
* per call: prompt/completion/reasoning tokens (summed over paid attempts), latency, cost from the
  price table, attempts, error. Error text never contains the key (:func:`secrets.redact`).
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from dataclasses import dataclass, field, asdict
from typing import Any, Callable, Protocol
from urllib.parse import urlsplit, urlunsplit

import openai

from eval_runners.pricing import PriceTable
from eval_runners.secrets import redact

DROPPABLE_PARAMS = ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty",
                    "stop", "logprobs", "n")


def normalize_base_url(url: str) -> str:
    """``scheme://host[:port][/prefix]`` ending in exactly one API version segment.

    A path that already ends in a version segment (``/v1``, ``/v1beta``, ``/openai/v1``) is kept;
    otherwise ``/v1`` is appended. Trailing slashes, a pasted ``/chat/completions`` suffix, query
    and fragment are dropped.
    """
    if not url or "://" not in url:
        raise ValueError(f"base URL must look like http(s)://host[:port][/path], got {url!r}")
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/completions"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
    last = path.rsplit("/", 1)[-1] if path else ""
    if not (len(last) >= 2 and last[0] == "v" and last[1].isdigit()):
        path = f"{path}/v1"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def request_hash(model: str, messages: list, params: dict) -> str:
    """The cache key: sha256 of the canonical (model, messages, requested params)."""
    return hashlib.sha256(canonical_json({"model": model, "messages": messages,
                                          "params": params}).encode()).hexdigest()


@dataclass
class EndpointConfig:
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    concurrency: int = 8
    rate_limit: float | None = None        # max request starts per second (None: unlimited)
    timeout: float = 300.0                 # seconds per attempt
    max_retries: int = 6                   # transient-error retries per call
    backoff_base: float = 1.0              # seconds; delay ~ U(0, min(max, base * 2**k))
    backoff_max: float = 60.0
    reasoning_retry_factor: float = 4.0
    max_budget: int = 65536

    def __post_init__(self):
        self.base_url = normalize_base_url(self.base_url)
        if self.concurrency < 1:
            raise ValueError("concurrency must be >= 1")


@dataclass
class CallResult:
    text: str | None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    latency_s: float | None = None
    cost_usd: float | None = None
    attempts: int = 0
    error: str | None = None
    params_sent: dict | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None

    def to_dict(self) -> dict:
        return asdict(self)


class ResponseCache(Protocol):
    def get(self, key: str) -> CallResult | None: ...
    def put(self, key: str, model: str, messages: list, params: dict, result: CallResult,
            meta: dict | None) -> None: ...


class MemoryCache:
    """A dict cache (tests, one-off scripts). The runner uses the ``responses`` table instead."""

    def __init__(self):
        self.data: dict[str, CallResult] = {}

    def get(self, key):
        hit = self.data.get(key)
        return None if hit is None or not hit.ok else CallResult(**{**hit.to_dict(), "cached": True})

    def put(self, key, model, messages, params, result, meta):
        self.data[key] = result


class ParamPolicy:
    """What is sent for a model: requested params, minus what that model has rejected."""

    def __init__(self, default_temperature: float | None = 0.0):
        self.default_temperature = default_temperature
        self.rejected: dict[str, set[str]] = {}
        self.token_param: dict[str, str] = {}

    def apply(self, model: str, params: dict) -> dict:
        out = dict(params)
        if "temperature" not in out and self.default_temperature is not None:
            out["temperature"] = self.default_temperature
        for name in self.rejected.get(model, ()):
            out.pop(name, None)
        if "max_tokens" in out and self.token_param.get(model) == "max_completion_tokens":
            out["max_completion_tokens"] = out.pop("max_tokens")
        return out

    def learn(self, model: str, sent: dict, message: str) -> bool:
        """Learn from a 400 naming a parameter; True when the call is worth repeating."""
        low = message.lower()
        if "max_tokens" in sent and "max_completion_tokens" in low:
            self.token_param[model] = "max_completion_tokens"
            return True
        for name in DROPPABLE_PARAMS:
            if name in sent and _names_param(low, name):
                self.rejected.setdefault(model, set()).add(name)
                return True
        return False


def _names_param(low: str, name: str) -> bool:
    import re
    return re.search(rf"(?<![a-z_]){re.escape(name)}(?![a-z_])", low) is not None


class _RateLimiter:
    def __init__(self, per_second: float | None, clock: Callable[[], float] = time.monotonic):
        self.interval = 1.0 / per_second if per_second else 0.0
        self.clock = clock
        self.next = 0.0
        self.lock = asyncio.Lock()

    async def wait(self):
        if not self.interval:
            return
        async with self.lock:
            now = self.clock()
            delay = self.next - now
            self.next = max(now, self.next) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


class _Transient(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def _retry_after(exc: Exception) -> float | None:
    resp = getattr(exc, "response", None)
    headers = getattr(resp, "headers", None)
    if not headers:
        return None
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class ChatClient:
    def __init__(self, config: EndpointConfig, prices: PriceTable | None = None,
                 cache: ResponseCache | None = None, policy: ParamPolicy | None = None,
                 rng: random.Random | None = None):
        self.config = config
        self.prices = prices or PriceTable()
        self.cache = cache
        self.policy = policy or ParamPolicy()
        self.rng = rng or random.Random()
        self.sem = asyncio.Semaphore(config.concurrency)
        self.limiter = _RateLimiter(config.rate_limit)
        self.n_requests = 0          # HTTP requests sent (all attempts)
        self._sdk = openai.AsyncOpenAI(api_key=config.api_key or "no-key", base_url=config.base_url,
                                       max_retries=0, timeout=config.timeout)

    async def aclose(self):
        await self._sdk.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()

    def _redact(self, text: object) -> str:
        return redact(text, self.config.api_key)

    def backoff(self, attempt: int, retry_after: float | None = None) -> float:
        cap = min(self.config.backoff_max, self.config.backoff_base * (2 ** attempt))
        delay = self.rng.uniform(0, cap)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.config.backoff_max))
        return delay

    async def complete(self, model: str, messages: list, params: dict | None = None, *,
                       key: str | None = None, meta: dict | None = None,
                       allow_escalation: Callable[[int, int], bool] | None = None) -> CallResult:
        """One chat completion. ``key`` overrides the cache key (e.g. a hash of image references).

        ``allow_escalation(prompt_tokens, new_budget)`` may veto the larger-budget retry (budget cap).
        """
        params = dict(params or {})
        key = key or request_hash(model, messages, params)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        async with self.sem:
            result = await self._complete(model, messages, params, allow_escalation)
        if self.cache is not None:
            self.cache.put(key, model, messages, params, result, meta)
        return result

    async def _complete(self, model: str, messages: list, params: dict, allow_escalation=None) -> CallResult:
        res = CallResult(text=None, prompt_tokens=0, completion_tokens=0, reasoning_tokens=0)
        escalated: int | None = None
        transient = 0
        started = time.perf_counter()
        while True:
            sent = self.policy.apply(model, params)
            budget_key = "max_completion_tokens" if "max_completion_tokens" in sent else "max_tokens"
            if escalated:
                sent[budget_key] = escalated
            res.params_sent = sent
            await self.limiter.wait()
            res.attempts += 1
            self.n_requests += 1
            try:
                completion = await self._sdk.chat.completions.create(model=model, messages=messages, **sent)
                choice = completion.choices[0] if completion.choices else None
                if choice is None:
                    raise _Transient("response has no choices")
            except openai.BadRequestError as exc:
                if self.policy.learn(model, sent, str(exc)):
                    continue
                res.error = self._redact(f"BadRequestError: {exc}")
                break
            except (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                    openai.APIConnectionError, openai.APIResponseValidationError,
                    json.JSONDecodeError, _Transient) as exc:
                if transient >= self.config.max_retries:
                    res.error = self._redact(f"{type(exc).__name__} after {res.attempts} attempts: {exc}")
                    break
                await asyncio.sleep(self.backoff(transient, _retry_after(exc)))
                transient += 1
                continue
            except openai.APIStatusError as exc:
                if exc.status_code >= 500 or exc.status_code in (408, 409, 425):
                    if transient < self.config.max_retries:
                        await asyncio.sleep(self.backoff(transient, _retry_after(exc)))
                        transient += 1
                        continue
                res.error = self._redact(f"{type(exc).__name__} ({exc.status_code}): {exc}")
                break
            except openai.OpenAIError as exc:
                res.error = self._redact(f"{type(exc).__name__}: {exc}")
                break
            except Exception as exc:  # noqa: BLE001 - a client must never leak a raw exception
                res.error = self._redact(f"{type(exc).__name__}: {exc}")
                break
            usage = completion.usage
            if usage is not None:
                res.prompt_tokens += usage.prompt_tokens or 0
                res.completion_tokens += usage.completion_tokens or 0
                details = getattr(usage, "completion_tokens_details", None)
                res.reasoning_tokens += (getattr(details, "reasoning_tokens", None) or 0) if details else 0
            text = (choice.message.content if choice.message else None) or ""
            res.text, res.finish_reason = text, choice.finish_reason
            if not text.strip() and choice.finish_reason == "length" and not escalated:
                current = sent.get(budget_key) or 4096
                new = min(self.config.max_budget, int(current * self.config.reasoning_retry_factor))
                last_prompt = (usage.prompt_tokens or 0) if usage is not None else 0
                if new > current and (allow_escalation is None or allow_escalation(last_prompt, new)):
                    escalated = new
                    continue
            break
        res.latency_s = time.perf_counter() - started
        res.cost_usd = self.prices.cost(model, res.prompt_tokens, res.completion_tokens)
        if res.error is not None:
            res.text = None
        return res
