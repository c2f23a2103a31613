"""How the command line reads its options, shared by the commands that evaluate and fit.

* ``--sources a b`` (space-separated, as the published CLI takes them) is read like ``--sources a,b``
  and ``--sources a --sources b`` (:class:`ListOptionsCommand`).
* Main options also come from ``PACE_*`` environment variables (a flag wins). An environment value a
  method does not read is left out, so a ``PACE_COUNT`` set for the usual runs does not break
  ``--method mean``; the same option typed on the command line is refused (:func:`options_given`).
* An error about an option whose value came from the environment names the variable (:func:`env_hint`).
* The methods' options (:mod:`warehouse.methods.options`) become flags by :func:`with_options`: their
  declarations are the only place a flag, its variable, type, default and help are written.
"""
from __future__ import annotations

import contextlib
import inspect
import os
from pathlib import Path
from typing import Annotated, Callable, Iterable, Optional

import typer
import typer.core
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from warehouse.connect import memory_limit
from warehouse.errors import UserError
from warehouse.methods.options import Option
from warehouse.output import err_console

DbOpt = Annotated[Optional[Path], typer.Option(
    "--db", envvar="PACE_DB", show_envvar=True,
    help="Warehouse file (default ./pace.duckdb; ~ is expanded).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON instead of tables.")]


def fail(message: str, code: int = 2) -> None:
    """Print ``error: message`` on stderr (unwrapped, so paths stay whole) and exit."""
    typer.echo(f"error: {memory_hint(message)}", err=True)
    raise typer.Exit(code)


def memory_hint(message: str) -> str:
    """DuckDB's out-of-memory error, with where its ceiling comes from (warehouse.connect)."""
    if "Out of Memory Error" not in message:
        return message
    return (f"{message} (DuckDB may use {memory_limit()} here: raise it with PACE_MEMORY_LIMIT, "
            "e.g. PACE_MEMORY_LIMIT=12GB, if the machine has the memory)")


def progress_bar(total: int, label: str, enabled: bool = True):
    """A rich progress bar on stderr; returns (context manager, advance callable). None when stderr is not a
    terminal: rich draws nothing there but a blank line at the end (which made one-line errors two)."""
    if not enabled or total < 2 or not err_console.is_terminal:
        return contextlib.nullcontext(), None
    progress = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=err_console, transient=True)
    task = progress.add_task(label, total=total)
    return progress, lambda n=1: progress.advance(task, n)

# typer carries its own copy of click, so parameters and their sources are told apart by their
# names, never by click's classes


def _kind(param) -> str:
    return getattr(param, "param_type_name", "")


class ListOptionsCommand(typer.core.TyperCommand):
    """A command whose repeatable options (``--sources``, ``--targets``, ``--exclude``) also take
    several space-separated values: ``--sources a b --count 10`` is ``--sources a,b --count 10``.
    Only for commands without positional arguments, where a bare word can only be such a value."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        if any(_kind(p) == "argument" for p in self.params):
            return super().parse_args(ctx, args)
        lists = {opt for p in self.params if _kind(p) == "option" and p.multiple for opt in p.opts}
        out: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            out.append(arg)
            if arg == "--":
                out.extend(args[i:])
                break
            name, eq, _ = arg.partition("=")
            if name not in lists:
                continue
            if not eq and i < len(args):          # the option's own value, whatever it looks like
                out.append(args[i])
                i += 1
            while i < len(args) and not args[i].startswith("-"):
                out[-1] = f"{out[-1]},{args[i]}"
                i += 1
        return super().parse_args(ctx, out)


def _source(ctx, name: str) -> str:
    """'COMMANDLINE', 'ENVIRONMENT', 'DEFAULT', ... (click's ParameterSource by name)."""
    source = ctx.get_parameter_source(name)
    return getattr(source, "name", "")


def unless_only_from_environment(ctx, value, name: str, needs: bool):
    """``value``, or None when it came from its ``PACE_*`` variable and what it applies to (``needs``) is off
    for this call: a variable set for other calls is ignored where it does not apply, a flag never is."""
    return None if not needs and _source(ctx, name) == "ENVIRONMENT" else value


def options_given(ctx, names: Iterable[str], reads=None) -> dict:
    """{name: value} of the options given on the command line or by a ``PACE_*`` variable (None
    otherwise: the callee applies its default). ``reads``, the options the chosen method reads,
    drops the environment's values for the others (only a typed flag is refused)."""
    out = {}
    for name in names:
        source = _source(ctx, name)
        value = ctx.params.get(name)
        if source == "COMMANDLINE":
            out[name] = value
        elif source == "ENVIRONMENT" and (reads is None or name in reads):
            out[name] = value
        else:
            out[name] = None
    return out


@contextlib.contextmanager
def env_hint(ctx):
    """Re-raise a :class:`UserError` about an option whose value came from the environment with
    the variable named, e.g. ``--count must be ... not 0 (from PACE_COUNT=0)``."""
    try:
        yield
    except UserError as exc:
        message = str(exc)
        for param in ctx.command.params:
            if _kind(param) != "option" or not param.envvar or param.name is None:
                continue
            if _source(ctx, param.name) != "ENVIRONMENT":
                continue
            if any(opt in message for opt in param.opts):
                var = param.envvar if isinstance(param.envvar, str) else param.envvar[0]
                raise UserError(f"{message} (from {var}={os.environ.get(var, '')!r})") from exc
        raise


def _annotation(option: Option):
    kind = Optional[option.kind] if option.default is None else option.kind
    return Annotated[kind, typer.Option(option.flag, envvar=option.env, show_envvar=True, help=option.help)]


def with_options(options: Iterable[Option]) -> Callable:
    """Decorator: the command also takes ``options`` as flags (each with its ``PACE_*`` variable, type,
    default and help from its declaration); the command receives their values as ``options`` (a dict)."""
    options = list(options)

    def decorate(fn: Callable) -> Callable:
        signature = inspect.signature(fn, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != "options"]
        extra = [inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=o.default, annotation=_annotation(o))
                 for o in options]

        def command(**kwargs):
            values = {o.name: kwargs.pop(o.name) for o in options}
            return fn(options=values, **kwargs)

        command.__signature__ = signature.replace(parameters=own + extra)
        command.__name__, command.__doc__ = fn.__name__, fn.__doc__
        return command
    return decorate
