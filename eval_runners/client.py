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
  price table, attempts, error and its kind (:data:`ERROR_KINDS`). Error text never contains the
  key (:func:`secrets.redact`).
* replies are parsed from the raw body by :func:`parse_completion`, never trusted: invalid UTF-8,
  lone surrogates and NULs become U+FFFD, a huge reply is cut (head and tail kept), and a body
  that is not a chat completion (HTML, ``null``, ``{"choices": "x"}``, content ``42``) is a
  retried ``bad_reply`` error instead of an exception, so whatever arrives can be stored.
* a refused credential or unknown model (401/403/404, :data:`FATAL_KINDS`) stops the client: no
  further request is sent, calls waiting for a retry give up at once (``aborted``, not stored).
* a redirect is followed only to the base URL's own origin (scheme, host, port): one to another
  origin would carry the prompt there, so it is refused before any request goes out
  (:class:`CrossOriginRedirect`, kind ``redirect``, fatal like a refused key).
* credentials never travel in the URL: a base URL with ``user:password@`` or a ``key=`` parameter is
  refused (:func:`normalize_base_url`); the key goes only in the ``Authorization`` header.
* every text returned (reply, error) has anything shaped like a credential removed
  (:func:`secrets.redact`), so nothing downstream can store it.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import math
import random
import re
import time
from dataclasses import dataclass, field, asdict
from typing import Any, Callable, Protocol
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import openai

from eval_runners.pricing import PriceTable
from eval_runners.secrets import public_url, redact

DROPPABLE_PARAMS = ("temperature", "top_p", "seed", "presence_penalty", "frequency_penalty",
                    "stop", "logprobs", "n")

#: a stored reply is cut to about this many characters; head and tail are kept because final
#: answers usually sit at the end of a long reasoning text
MAX_REPLY_CHARS = 1_000_000

#: why a call failed -> how a summary says it
ERROR_KINDS = {
    "auth": "credentials refused (HTTP 401/403)",
    "not_found": "endpoint or model not found (HTTP 404)",
    "rate_limit": "rate limited (HTTP 429), retries exhausted",
    "timeout": "timed out, retries exhausted",
    "connection": "connection failed, retries exhausted",
    "server": "server error (HTTP 5xx), retries exhausted",
    "bad_request": "request rejected (HTTP 400)",
    "bad_reply": "reply was not a chat completion, retries exhausted",
    "http": "unexpected HTTP status",
    "other": "client error",
    "aborted": "not sent: the run was stopped",
    "redirect": "redirected to another host (not followed)",
}
#: after one of these no later call can succeed, so the client stops sending
FATAL_KINDS = ("auth", "not_found", "redirect")

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str, limit: int | None = None) -> tuple[str, list[str]]:
    """``text`` made safe to store and print: lone surrogates and NULs replaced by U+FFFD, and at
    most about ``limit`` characters (the head and the tail are kept around an omission marker).

    Returns ``(text, notes)``, one note per change (empty when nothing was changed).
    """
    notes = []
    n = len(_SURROGATE.findall(text))
    if n:
        text = _SURROGATE.sub("\ufffd", text)
        notes.append(f"{n} lone surrogate(s) replaced by U+FFFD")
    n = text.count("\x00")
    if n:
        text = text.replace("\x00", "\ufffd")
        notes.append(f"{n} NUL character(s) replaced by U+FFFD")
    if limit is not None and len(text) > limit:
        if limit < 200:
            notes.append(f"cut from {len(text)} to {limit} characters")
            return text[:limit], notes
        half = (limit - 64) // 2             # the marker takes < 64 characters: the result fits in limit
        omitted = len(text) - 2 * half
        notes.append(f"cut from {len(text)} characters: {omitted} omitted in the middle")
        text = f"{text[:half]}\n[... {omitted} characters omitted by the runner ...]\n{text[-half:]}"
    return text, notes


def safe_text(text: object, limit: int = 2000) -> str:
    """``str(text)`` cleaned (see :func:`clean_text`) for an error message or a log line."""
    return clean_text(str(text), limit)[0]


class BadReply(Exception):
    """The body of a 200 response is not a usable chat completion."""


class CrossOriginRedirect(Exception):
    """The endpoint answered with a redirect to another origin; it was not followed."""


def origin(url: object) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a URL, the port filled in from the scheme when not written."""
    parts = urlsplit(str(url))
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


#: query parameters that carry a credential (refused in a base URL)
_KEY_PARAMS = {"key", "api_key", "api-key", "apikey", "token", "access_token", "sig", "signature"}


@dataclass
class ParsedReply:
    text: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int
    notes: list


def _token_count(value, name: str, notes: list) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < 0 or value != int(value) or value > 10 ** 9:
        notes.append(f"usage {name}={safe_text(value, 40)!s} is not a token count; counted as 0")
        return 0
    return int(value)


def _snippet(body: str) -> str:
    return repr(safe_text(body, 120))


def parse_completion(raw: bytes, limit: int | None = MAX_REPLY_CHARS) -> ParsedReply:
    """The answer text, finish reason and token counts of a chat-completion body (raw bytes).

    Never raises anything but :class:`BadReply`; the text it returns is always safe to store.
    """
    notes: list[str] = []
    try:
        body = raw.decode("utf-8")
    except UnicodeDecodeError:
        body = raw.decode("utf-8", "replace")
        notes.append("invalid UTF-8 in the body replaced by U+FFFD")
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise BadReply(f"body is not JSON: {_snippet(body)}") from None
    if not isinstance(data, dict):
        raise BadReply(f"body is not a JSON object: {_snippet(body)}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        if isinstance(data.get("error"), (dict, str)):
            raise BadReply(f"error in a 200 body: {_snippet(json.dumps(data['error']))}")
        raise BadReply(f"no choices in the body: {_snippet(body)}")
    choice = choices[0]
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if message is not None and not isinstance(message, dict):
        raise BadReply(f"message is {type(message).__name__}, not an object")
    if content is None:
        text = ""
    elif isinstance(content, str):
        text = content
    elif isinstance(content, list):            # content parts: keep the text ones
        text = "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    else:
        raise BadReply(f"message content is {type(content).__name__}, not text: {_snippet(json.dumps(content))}")
    text, more = clean_text(text, limit)
    notes += more
    finish = choice.get("finish_reason")
    finish = safe_text(finish, 64) if isinstance(finish, str) else None
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    return ParsedReply(text, finish, _token_count(usage.get("prompt_tokens"), "prompt_tokens", notes),
                       _token_count(usage.get("completion_tokens"), "completion_tokens", notes),
                       _token_count(reasoning, "reasoning_tokens", notes), notes)


def normalize_base_url(url: str) -> str:
    """``scheme://host[:port][/prefix]`` ending in exactly one API version segment.

    A path that already ends in a version segment (``/v1``, ``/v1beta``, ``/openai/v1``) is kept;
    otherwise ``/v1`` is appended. Trailing slashes, a pasted ``/chat/completions`` suffix, query
    and fragment are dropped.
    """
    if not url or "://" not in url:
        raise ValueError(f"base URL must look like http(s)://host[:port][/path], got {redact(url)!r}")
    parts = urlsplit(url.strip())
    if parts.username is not None or parts.password is not None or \
            any(k.lower() in _KEY_PARAMS for k, _ in parse_qsl(parts.query, keep_blank_values=True)):
        raise ValueError(f"the base URL {public_url(url.strip())} holds credentials (user:password@ or key=): "
                         "they are never sent that way; pass the key with --api-key or API_KEY (or .env)")
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
    max_reply_chars: int = MAX_REPLY_CHARS

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
    error_kind: str | None = None        # a key of ERROR_KINDS; None on success
    params_sent: dict | None = None
    cached: bool = False
    note: str | None = None              # what sanitising changed in the reply, if anything

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
        self.stopped: str | None = None      # why no further request is sent (see stop())
        self._stop_event = asyncio.Event()
        http = openai.DefaultAsyncHttpxClient(event_hooks={"response": [self._same_origin_only]})
        self._sdk = openai.AsyncOpenAI(api_key=config.api_key or "no-key", base_url=config.base_url,
                                       max_retries=0, timeout=config.timeout, http_client=http)

    async def aclose(self):
        await self._sdk.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        await self.aclose()

    async def _same_origin_only(self, response) -> None:
        """httpx response hook: refuse a redirect to another origin before it is followed."""
        if not response.has_redirect_location:
            return
        target = response.url.join(response.headers["location"])
        if origin(target) != origin(self.config.base_url):
            where = public_url(str(target))
            host = urlsplit(where).netloc
            raise CrossOriginRedirect(
                f"{public_url(str(response.url))} redirected the call (HTTP {response.status_code}) to another host, "
                f"{host} ({where}): not followed, so no prompt was sent there; if {host} is the endpoint, "
                "pass it as the base URL")

    def stop(self, reason: str) -> None:
        """Send no further request: calls waiting to retry, and later calls, end ``aborted``."""
        if self.stopped is None:
            self.stopped = reason
        self._stop_event.set()

    async def _pause(self, seconds: float) -> None:
        """Sleep before a retry, cut short by :meth:`stop`."""
        try:
            await asyncio.wait_for(self._stop_event.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    def _redact(self, text: object) -> str:
        return safe_text(redact(text, self.config.api_key))

    def _fail(self, res: CallResult, kind: str, message: str) -> None:
        res.error, res.error_kind = self._redact(message), kind

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
        A call never sent because the client was stopped (``error_kind == "aborted"``) is not cached.
        """
        params = dict(params or {})
        key = key or request_hash(model, messages, params)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        async with self.sem:
            result = await self._complete(model, messages, params, allow_escalation)
        if self.cache is not None and result.error_kind != "aborted":
            self.cache.put(key, model, messages, params, result, meta)
        return result

    def _fatal(self, model: str, exc: "openai.APIStatusError") -> str:
        """One line naming the endpoint and the model (never the key)."""
        url = public_url(self.config.base_url) + "/chat/completions"
        what = (f"has no model {model!r} (or no such route)" if exc.status_code == 404
                else f"refused the credentials for model {model!r}")
        return self._redact(f"{url} {what} (HTTP {exc.status_code}: {_status_message(exc)})")

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
            if self.stopped is not None:
                self._fail(res, "aborted", f"not sent: {self.stopped}")
                break
            res.attempts += 1
            self.n_requests += 1
            try:
                raw = await self._sdk.chat.completions.with_raw_response.create(
                    model=model, messages=messages, **sent)
                reply = parse_completion(raw.content, self.config.max_reply_chars)
            except openai.BadRequestError as exc:
                if self.policy.learn(model, sent, str(exc)):
                    continue
                self._fail(res, "bad_request", f"BadRequestError: {exc}")
                break
            except CrossOriginRedirect as exc:
                self._fail(res, "redirect", str(exc))
                self.stop(self._redact(exc))
                break
            except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as exc:
                kind = "not_found" if exc.status_code == 404 else "auth"
                self._fail(res, kind, f"{type(exc).__name__} ({exc.status_code}): {exc}")
                self.stop(self._fatal(model, exc))
                break
            except (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
                    openai.APIConnectionError, openai.APIResponseValidationError, BadReply) as exc:
                if transient >= self.config.max_retries:
                    self._fail(res, _kind(exc), f"{type(exc).__name__} after {res.attempts} attempts: {exc}")
                    break
                await self._pause(self.backoff(transient, _retry_after(exc)))
                transient += 1
                continue
            except openai.APIStatusError as exc:
                if exc.status_code >= 500 or exc.status_code in (408, 409, 425):
                    if transient < self.config.max_retries:
                        await self._pause(self.backoff(transient, _retry_after(exc)))
                        transient += 1
                        continue
                self._fail(res, _kind(exc), f"{type(exc).__name__} ({exc.status_code}): {exc}")
                break
            except Exception as exc:  # noqa: BLE001 - a client must never leak a raw exception
                self._fail(res, "other", f"{type(exc).__name__}: {exc}")
                break
            res.prompt_tokens += reply.prompt_tokens
            res.completion_tokens += reply.completion_tokens
            res.reasoning_tokens += reply.reasoning_tokens
            res.text, res.finish_reason = redact(reply.text, self.config.api_key), reply.finish_reason
            res.note = "; ".join(reply.notes) or None
            if not reply.text.strip() and reply.finish_reason == "length" and not escalated:
                current = sent.get(budget_key) or 4096
                new = min(self.config.max_budget, int(current * self.config.reasoning_retry_factor))
                if new > current and (allow_escalation is None or allow_escalation(reply.prompt_tokens, new)):
                    escalated = new
                    continue
            break
        res.latency_s = time.perf_counter() - started
        res.cost_usd = self.prices.cost(model, res.prompt_tokens, res.completion_tokens)
        if res.error is not None:
            res.text = None
        return res


def _kind(exc: Exception) -> str:
    if isinstance(exc, (BadReply, openai.APIResponseValidationError)):
        return "bad_reply"
    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return "connection"
    if isinstance(exc, openai.RateLimitError):
        return "rate_limit"
    code = getattr(exc, "status_code", None)
    if isinstance(code, int) and code >= 500:
        return "server"
    return "http" if code is not None else "other"


def _status_message(exc: "openai.APIStatusError") -> str:
    """The provider's own error message, on one short line."""
    body = getattr(exc, "body", None)
    msg = body.get("message") if isinstance(body, dict) else None
    return " ".join(safe_text(msg or exc.message or "", 200).split())
