"""Headless Chromium for tests that look at a page (the Debian package ``chromium``, driven by
Playwright's Python client; nothing is downloaded: ``executable_path`` points at the system browser).

:func:`chromium_page` yields a page whose console errors and uncaught exceptions are collected in
``page.pace_errors``; :func:`skip_reason` says why there is no browser here (the tests skip with it).
"""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

#: where the Debian package puts the browser; PACE_CHROMIUM overrides it
CHROMIUM = os.environ.get("PACE_CHROMIUM", "/usr/bin/chromium")
#: what a sandboxed CI machine needs: no sandbox (root), no GPU, and nothing that calls out
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def skip_reason() -> str | None:
    """None when a browser test can run here, else why not."""
    if not Path(CHROMIUM).is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium; .ci/run installs it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[browser]')"
    return None


@contextmanager
def chromium_page(width: int = 1200, height: int = 900, javascript: bool = True):
    """A fresh browser (its own empty profile folder) and one page; closed afterwards."""
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="pace-chromium-")
    try:
        with sync_playwright() as pw:
            context = pw.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=FLAGS,
                                                            headless=True, viewport={"width": width, "height": height},
                                                            java_script_enabled=javascript)
            try:
                page = context.pages[0] if context.pages else context.new_page()
                page.pace_errors = []
                page.on("console", lambda m: page.pace_errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: page.pace_errors.append(str(e)))
                # the page must load nothing from outside: any request but the file itself fails the test
                page.on("request", lambda r: None if r.url.startswith(("file:", "data:", "about:"))
                        else page.pace_errors.append(f"network request: {r.url}"))
                yield page
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
