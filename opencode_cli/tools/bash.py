"""``bash``: run a command line in a shell (builtin-tools spec §2).

1. The command is parsed and scanned (:mod:`._shell_scan`): one ``external_directory`` ask names every
   directory outside the project that it touches (and an outside ``workdir``), then one ``bash`` ask
   names every simple command, with "always" prefixes from the arity table.
2. The shell (:mod:`._shell`) runs it in its own process group, input closed, output merged and
   streamed: ``ctx.metadata`` receives the growing preview, at most every 100 ms and once at the end.
   The timeout (default 2 minutes, or ``OPENCODE_EXPERIMENTAL_BASH_DEFAULT_TIMEOUT_MS``) and an abort
   stop the whole group.
3. The output (:mod:`._shell_output`) is kept in bounded memory; the model gets its tail within the
   project's limits, a pointer to the spill file holding all of it, and a ``<shell_metadata>`` block
   when the command was stopped. The exit code goes to the metadata, never into the text.

An abort does not fail the call: like OpenCode, the tool answers with what the command printed so far
and ``User aborted the command``. So the tool is declared with ``handles_abort``: the generic wrap
does not race the abort signal against it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import time
from typing import TYPE_CHECKING, Any, TypeVar

from .. import boundary, paths
from ..context import ToolContext
from ..contract import unless_aborted
from ..errors import ToolError
from ..flags import Flags
from ..results import ToolResult
from ..truncate import Truncator
from . import _bash_prompt, _sandbox, _shell, _shell_choice, _shell_commands, _shell_output, _shell_scan

if TYPE_CHECKING:
    from pydantic import BaseModel

T = TypeVar("T")

METADATA_INTERVAL_SECONDS = 0.1
NO_OUTPUT = "(no output)"
ABORTED_NOTE = "User aborted the command"
TIMEOUT_NOTE = (
    "shell tool terminated command after exceeding timeout {timeout} ms. If this command is expected to "
    "take longer and is not waiting for interactive input, retry with a larger timeout value in milliseconds."
)
TRUNCATED_PREFIX = "...output truncated...\n\nFull output saved to: {path}\n\n"


@functools.cache
def parameters() -> type[BaseModel]:
    """The bash tool's arguments, as a pydantic model made on first use (see :mod:`.plain_args`)."""
    from pydantic import Field, field_validator
    from pydantic_core import PydanticCustomError

    from ._arguments import Arguments

    class BashParameters(Arguments):
        """Arguments of the bash tool."""

        command: str = Field(description="The command to execute")
        timeout: int | None = Field(None, gt=0, description="Optional timeout in milliseconds")
        workdir: str | None = Field(
            None,
            description=(
                "The directory to run the command in; the project directory when left out. "
                "Use this instead of 'cd' commands."
            ),
        )

        @field_validator("timeout", mode="before")
        @classmethod
        def _number_only(cls, value: Any) -> Any:
            """A number, not one written in a string (nor a boolean): arguments are not coerced."""
            if isinstance(value, str | bool | bytes):
                raise PydanticCustomError("int_type", "Input should be a valid integer")
            return value

    return BashParameters


class _Reporter:
    """Sends the live preview to ``ctx.metadata``: at once, then at most every 100 ms, then a final one."""

    def __init__(self, ctx: ToolContext, interval: float | None = None) -> None:
        self.ctx = ctx
        self.interval = METADATA_INTERVAL_SECONDS if interval is None else interval
        self.sent: str | None = None
        self.latest = ""
        self.last_time = 0.0
        self.timer: asyncio.TimerHandle | None = None

    def send(self, text: str) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.sent = text
        self.last_time = time.monotonic()
        with contextlib.suppress(Exception):  # a failing progress display must not stall the command
            self.ctx.metadata(metadata={"output": text})

    def update(self, text: str) -> None:
        self.latest = text
        wait = self.interval - (time.monotonic() - self.last_time)
        if wait <= 0:
            self.send(text)
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(wait, lambda: self.send(self.latest))

    def final(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.sent != self.latest:
            self.send(self.latest)


async def _ask(ctx: ToolContext, scan: _shell_scan.Scan, command: str) -> None:
    if scan.dirs:
        globs = scan.dir_patterns
        await unless_aborted(
            ctx.ask(
                "external_directory",
                globs,
                always=globs,
                metadata={"command": command, "directories": list(scan.dirs), "patterns": globs},
            ),
            ctx,
        )
    trusting = [pattern for pattern in scan.patterns if _shell_commands.changes_trust(pattern)]
    if trusting:  # only the user trusts a project: a model's `opencode trust` asks config (plan: denied)
        await unless_aborted(
            ctx.ask(boundary.CONFIG_PERMISSION, trusting, always=trusting, metadata={"command": command}), ctx
        )
    if scan.patterns:
        await unless_aborted(
            ctx.ask("bash", scan.patterns, always=scan.always, metadata={"command": command}), ctx
        )


def _output_text(collected: _shell_output.Collected, notes: list[str]) -> str:
    output = collected.text or NO_OUTPUT
    if collected.cut and collected.path is not None:
        output = TRUNCATED_PREFIX.format(path=collected.path) + output
    if notes:
        output += "\n\n<shell_metadata>\n" + "\n".join(notes) + "\n</shell_metadata>"
    return output


def _scan(command: str, cwd: str, ctx: ToolContext, env: dict[str, str]) -> _shell_scan.Scan:
    """In a worker thread: what ``command`` run in ``cwd`` reaches (:func:`_shell_scan.scan`), the
    working directory included when it is outside the project."""
    scan = _shell_scan.scan(command, cwd=cwd, directory=ctx.directory, worktree=ctx.worktree, env=env)
    if not boundary.is_inside(cwd, ctx.directory, ctx.worktree):
        scan.add_dir(boundary.real(cwd))
    return scan


async def execute(params: Any, ctx: ToolContext) -> ToolResult:
    """Scan, ask, run ``params.command`` and report its output (see the module docstring)."""
    if params.timeout is not None and params.timeout < 0:  # only reachable when validation is bypassed
        raise ToolError(f"Invalid timeout value: {params.timeout}. Timeout must be a positive number.")
    timeout_ms = params.timeout or _bash_prompt.default_timeout_ms(
        Flags.from_env(ctx.env).bash_default_timeout_ms
    )
    cwd = str(ctx.resolve(params.workdir)) if params.workdir else str(ctx.directory)
    env = await ctx.process_env(cwd)  # the shell_env hooks may change it
    shell = _shell_choice.choose(env)

    scan = await asyncio.to_thread(_scan, params.command, cwd, ctx, env)  # it walks paths: off the loop
    await _ask(ctx, scan, params.command)

    if not os.path.isdir(cwd):
        raise ToolError(f"The working directory does not exist: {cwd}")
    with contextlib.suppress(OSError):
        paths.tmp_dir().mkdir(parents=True, exist_ok=True)

    truncator = ctx.truncator or Truncator(paths.tool_output_dir(ctx.env))
    sandboxed = await _sandbox.prepare(ctx, scan.patterns, params.command, truncator.directory)
    collector = _shell_output.OutputCollector(truncator)
    reporter = _Reporter(ctx)
    reporter.send("")

    def on_output(text: str) -> None:
        collector.add(text)
        reporter.update(collector.preview)

    try:
        finished = await _shell.run(
            shell,
            params.command,
            cwd=cwd,
            env=env,
            timeout=timeout_ms / 1000,
            abort=ctx.abort,
            on_output=on_output,
            rules=sandboxed.rules if sandboxed is not None else None,
            launcher=ctx.project.launcher if ctx.project is not None else None,
        )
    except _shell.SandboxError as error:
        collector.close()
        raise ToolError(f"{error}. The command was not run.") from None
    except OSError as error:
        collector.close()
        raise ToolError(f"Failed to start {shell}: {error.strerror or error}") from None
    except BaseException:
        collector.close()
        raise
    finally:
        reporter.final()

    notes = []
    if finished.timed_out:
        notes.append(TIMEOUT_NOTE.format(timeout=timeout_ms))
    if finished.aborted:
        notes.append(ABORTED_NOTE)
    collected = collector.finish()
    output = _output_text(collected, notes)
    if sandboxed is not None and finished.code not in (0, None):
        output = output.rstrip("\n") + "\n\n" + sandboxed.plan.note()
    metadata: dict[str, Any] = {
        "output": collector.preview or _shell_output.preview(output),
        "exit": finished.code,
        "truncated": collected.cut,
    }
    if collected.cut and collected.path is not None:
        metadata["outputPath"] = str(collected.path)
    return ToolResult(title=params.command, output=output, metadata=metadata)


def init() -> dict[str, Any]:
    """The tool, built on first use (its description comes from :func:`define`'s callable).

    An abort while the command runs is answered by the tool itself, with the output so far.
    """
    return {"parameters_from": parameters, "execute": execute, "handles_abort": True}
