"""Run untrusted model code: a fresh ``python -I`` in a temporary directory, with CPU, memory,
file-size and process limits (``resource.setrlimit``), a wall-clock timeout that kills the whole
process group, a minimal environment (no credentials), and no network: inside a new network
namespace (``unshare -rn``) when the kernel allows it, and always with ``socket`` disabled by a
preamble."""
from __future__ import annotations

import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass

PREAMBLE = r'''
import socket as _s
def _blocked(*a, **k):
    raise OSError("network access is disabled in the sandbox")
for _n in ("socket", "create_connection", "create_server", "socketpair", "getaddrinfo", "fromfd"):
    setattr(_s, _n, _blocked)
del _s, _n, _blocked
'''


@dataclass
class SandboxResult:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


@functools.lru_cache(maxsize=1)
def netns_available() -> bool:
    exe = shutil.which("unshare")
    if not exe:
        return False
    try:
        return subprocess.run([exe, "-rn", "true"], capture_output=True, timeout=5).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _limits(cpu_s: int, memory_mb: int, fsize_mb: int):
    def apply():
        os.setsid()
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
        mem = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        fs = fsize_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_FSIZE, (fs, fs))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def run_python(code: str, *, stdin: str | None = None, timeout: float = 6.0, memory_mb: int = 1024,
               fsize_mb: int = 16, network: bool = False) -> SandboxResult:
    with tempfile.TemporaryDirectory(prefix="pace-sbx-") as tmp:
        prog = os.path.join(tmp, "prog.py")
        with open(prog, "w", encoding="utf-8") as fh:
            fh.write(("" if network else PREAMBLE) + "\n" + code)
        cmd = [sys.executable, "-I", "-B", prog]
        if not network and netns_available():
            cmd = [shutil.which("unshare"), "-rn"] + cmd
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
        p = subprocess.Popen(cmd, cwd=tmp, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=_limits(int(timeout) + 1, memory_mb, fsize_mb))
        try:
            out, err = p.communicate(stdin.encode() if stdin is not None else None, timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
            timed_out = True
        return SandboxResult(p.returncode, out.decode(errors="replace")[-20000:],
                             err.decode(errors="replace")[-20000:], timed_out)
