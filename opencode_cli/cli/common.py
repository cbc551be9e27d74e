"""Helpers shared by the CLI commands: building the project, printing, and turning errors into exit codes."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import typer

from ..errors import ConfigError, OpencodeError, UnknownToolError

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2


def err(message: str) -> None:
    """Print one diagnostic line to stderr."""
    print(message, file=sys.stderr, flush=True)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print ``message`` to stderr and exit with ``code``."""
    err(message)
    raise typer.Exit(code)


def print_json(value: Any) -> None:
    """Pretty JSON on stdout, keys in insertion order."""
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False, default=str) + "\n")


@contextmanager
def friendly_errors() -> Iterator[None]:
    """Turn our configuration and lookup errors into a one-line message and exit code 2."""
    try:
        yield
    except UnknownToolError as error:
        fail(f"error: {error}")
    except ConfigError as error:
        fail(f"error: {error}")
    except OpencodeError as error:
        fail(f"error: {error}", EXIT_TOOL_ERROR)
    except typer.Exit:
        raise
    except Exception as error:
        if os.environ.get("OPENCODE_DEBUG"):
            raise
        from ..plugins import describe_exception

        fail(f"error: {describe_exception(error)} (set OPENCODE_DEBUG=1 for the traceback)", EXIT_TOOL_ERROR)


def make_project(directory: Path | None = None, warn: Callable[[str], None] | None = None) -> Any:
    """The :class:`~opencode_cli.project.Project` for the current directory (or ``directory``)."""
    from ..project import Project

    return Project(directory, warn=warn or (lambda message: err(f"warning: {message}")))


def first_line(text: str) -> str:
    """The first non-empty line of ``text``."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def print_rows(rows: list[tuple[str, str, str]]) -> None:
    """Three aligned columns (id, source, text) on stdout; ``no tools`` on stderr when empty."""
    if not rows:
        err("no tools")
        return
    id_width = max(len(row[0]) for row in rows)
    source_width = max(len(row[1]) for row in rows)
    for tool_id, source, text in rows:
        print(f"{tool_id:<{id_width}}  {source:<{source_width}}  {text}".rstrip())
