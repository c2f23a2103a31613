"""A scripted chat-completions server on 127.0.0.1 for the runner tests (stdlib only).

``script(body, server) -> Reply`` decides each answer. Every request is recorded (body and
headers); ``answered[prompt]`` counts responses fully written for a prompt (the last user
message), which is what a provider would bill.

``MODES`` holds named scripts for hostile endpoints (lone surrogates, NULs, invalid UTF-8, huge
replies, garbage bodies, 401, 403, 429 forever, hanging). Run standalone to reproduce a case by
hand: ``python er_chat_server.py MODE`` prints its URL, then serves until killed.
"""
from __future__ import annotations

import json
import re
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


@dataclass
class Reply:
    status: int = 200
    body: object = None                 # dict -> JSON; bytes/str sent as is
    headers: dict = field(default_factory=dict)
    delay: float = 0.0
    hang: bool = False                  # block until server.release is set, then drop the connection


def prompt_of(body: dict) -> str:
    for m in reversed(body.get("messages", [])):
        if m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, list):
                return " ".join(p.get("text", "") for p in c if isinstance(p, dict))
            return c or ""
    return ""


def completion(text: str | None, prompt_tokens: int = 10, completion_tokens: int = 5,
               finish_reason: str = "stop", reasoning_tokens: int = 0, model: str = "m") -> Reply:
    body = {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens,
                  "completion_tokens_details": {"reasoning_tokens": reasoning_tokens}},
    }
    return Reply(200, body)


def error(status: int, message: str = "error", headers: dict | None = None) -> Reply:
    return Reply(status, {"error": {"message": message, "type": "test", "code": status}}, headers or {})


class ChatServer:
    def __init__(self, script: Callable[[dict, "ChatServer"], Reply] | None = None, port: int = 0):
        self.script = script or (lambda body, srv: completion("ok"))
        self.requests: list[dict] = []
        self.answered: Counter = Counter()
        self.seen: Counter = Counter()
        self.release = threading.Event()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                n = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                prompt = prompt_of(body)
                with server.lock:
                    server.requests.append({"path": self.path, "body": body,
                                            "headers": {k.lower(): v for k, v in self.headers.items()}})
                    server.seen[prompt] += 1
                    reply = server.script(body, server)
                if reply.hang:
                    server.release.wait(60)
                    self.close_connection = True
                    return
                if reply.delay:
                    import time
                    time.sleep(reply.delay)
                payload = reply.body
                if isinstance(payload, (dict, list)):
                    payload = json.dumps(payload).encode()
                elif isinstance(payload, str):
                    payload = payload.encode()
                elif payload is None:
                    payload = b""
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    for k, v in reply.headers.items():
                        self.send_header(k, str(v))
                    self.end_headers()
                    self.wfile.write(payload)
                    self.wfile.flush()
                except OSError:
                    return
                if reply.status == 200:
                    with server.lock:
                        server.answered[prompt] += 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        # a short poll interval: stop() (shutdown) returns within 50 ms instead of 0.5 s per test
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                       daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "ChatServer":
        self.thread.start()
        return self

    def stop(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


# ---------------------------------------------------------------------------------- named modes
def aime_answer(body: dict) -> str:
    """The right answer to the test packs' 'AIME question i: what is i + 100?' (else '0')."""
    m = re.search(r"question (\d+)", prompt_of(body))
    return str(int(m.group(1)) + 100) if m else "0"


def raw_completion(content_json: bytes, prompt_tokens: int = 10, completion_tokens: int = 5) -> Reply:
    """A 200 whose message content is the given raw JSON bytes (so invalid UTF-8 can be sent)."""
    return Reply(200, b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m", '
                      b'"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", '
                      b'"content": ' + content_json + b'}}], "usage": {"prompt_tokens": '
                      + str(prompt_tokens).encode() + b', "completion_tokens": '
                      + str(completion_tokens).encode() + b', "total_tokens": 15}}')


#: HUGE_CHARS characters of filler before the answer in mode 'huge'
HUGE_CHARS = 3_000_000

GARBAGE = [b"<html><body>502 Bad Gateway</body></html>", b"", b"null", b"[]", b'{"choices": "none"}',
           b'{"choices": [{"message": {"content": 42}}]}', b'{"choices": [ broken',
           b'{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": "many"}}']


def _garbage(body, srv):
    return Reply(200, GARBAGE[(len(srv.requests) - 1) % len(GARBAGE)])


MODES: dict[str, Callable[[dict, "ChatServer"], Reply]] = {
    "ok": lambda b, s: completion(f"Thinking... so \\boxed{{{aime_answer(b)}}}", 50, 10),
    # JSON escapes a lone surrogate as \ud800: valid JSON, but not encodable as UTF-8
    "surrogate": lambda b, s: completion(f"Thinking \ud800 and \udfff... so \\boxed{{{aime_answer(b)}}}", 50, 10),
    "nul": lambda b, s: completion(f"Thinking\x00\x00 so \\boxed{{{aime_answer(b)}}}", 50, 10),
    "invalid-utf8": lambda b, s: raw_completion(b'"Thinking \xff\xfe\xc3 so \\\\boxed{'
                                                + aime_answer(b).encode() + b'}"', 50, 10),
    "huge": lambda b, s: completion("x" * HUGE_CHARS + f" so \\boxed{{{aime_answer(b)}}}", 50, 10),
    "garbage": _garbage,
    "401": lambda b, s: error(401, "Incorrect API key provided", {}),
    "403": lambda b, s: error(403, "This key may not use this model", {}),
    "404": lambda b, s: error(404, "The model does not exist", {}),
    "429": lambda b, s: error(429, "Rate limit reached", {"retry-after": "0"}),
    "hang": lambda b, s: Reply(hang=True),
}


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else "ok"
    if mode not in MODES:
        sys.exit(f"unknown mode {mode!r}; one of: {', '.join(MODES)}")
    srv = ChatServer(MODES[mode]).start()
    print(srv.url, flush=True)
    try:
        srv.thread.join()
    except KeyboardInterrupt:
        srv.stop()
