"""Declared dependencies equal imports: every third-party module the package imports is declared in
pyproject.toml (core or an extra), every core dependency and every extra is imported somewhere, and
the test tools are what the tests use."""
from __future__ import annotations

import ast
import functools
import importlib.metadata
import re
import sys
from pathlib import Path

from tests.conftest import REPO

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGES = [p.rstrip("*") for p in PROJECT["tool"]["setuptools"]["packages"]["find"]["include"]]
SELF = PROJECT["project"]["name"]

#: extras the package itself never imports, with why they are declared
COMPANIONS = {
    "spark": "spark/views.sql of `pace export` runs on Spark (the tests run it on a local SparkSession)",
    "polars": "reads the export (documented in the README; the tests read it with polars)",
    "browser": "the report's browser test drives Chromium with Playwright (tests/browser.py)",
}
#: test-extra entries the tests do not import: tools run by `make test` or by a test
TOOLS = {"ruff": "lints in `make test`", "pytest-xdist": "runs `make test` on TEST_WORKERS processes",
         "setuptools": "builds the wheel of tests/package/test_install.py"}


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _third_party_imports(folders: list[Path]) -> dict[str, set[str]]:
    """{top-level module: files importing it} for modules outside the stdlib, the project and the
    folders' own modules (the tests import helpers by file name)."""
    found: dict[str, set[str]] = {}
    local = {p.stem for folder in folders for p in folder.rglob("*.py")}
    for folder in folders:
        for path in folder.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in PACKAGES and top not in local \
                            and top != "tests":
                        found.setdefault(top, set()).add(str(path.relative_to(REPO)))
    return found


@functools.lru_cache(maxsize=1)
def _module_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def _distribution(module: str) -> str:
    """The distribution that provides ``module`` (an uninstalled one, e.g. tomli on 3.11, by its name)."""
    dists = _module_distributions().get(module)
    return _name(dists[0] if dists else module)


def _extras() -> dict[str, set[str]]:
    return {extra: {_name(r) for r in reqs if _name(r) != SELF}
            for extra, reqs in PROJECT["project"]["optional-dependencies"].items()}


def test_package_imports_are_declared_and_declared_dependencies_are_imported():
    imported = {_distribution(m): files for m, files in _third_party_imports([REPO / p for p in PACKAGES]).items()}
    core = {_name(r) for r in PROJECT["project"]["dependencies"]}
    extras = _extras()
    optional = set().union(*(names for extra, names in extras.items() if extra != "test"))

    undeclared = {d: sorted(f)[:3] for d, f in imported.items() if d not in core | optional}
    assert not undeclared, f"imported but not declared in pyproject.toml: {undeclared}"
    unused = sorted(core - set(imported))
    assert not unused, f"core dependencies the package never imports: {unused}"
    for extra, names in extras.items():
        if extra in COMPANIONS or extra == "test" or not names:
            continue
        assert names & set(imported), f"extra {extra!r} ({sorted(names)}) is imported nowhere in the package"
    for extra in COMPANIONS:
        assert extra in extras and not extras[extra] & set(imported), \
            f"{extra!r} is imported by the package now: drop it from COMPANIONS"


def test_test_extra_is_what_the_tests_use():
    used = {_distribution(m) for m in _third_party_imports([REPO / "tests"])}
    test_extra = _extras()["test"]
    for name in test_extra - set(TOOLS):
        assert name in used, f"test extra {name!r} is imported by no test"
    assert set(TOOLS) <= test_extra
