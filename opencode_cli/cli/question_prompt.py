"""The question asker of ``opencode tools run``: ``--answer`` values first, then a terminal prompt.

It is the host side of :mod:`opencode_cli.tools._question`. Each question takes the next ``--answer``
value, read as: a choice's number (``2``), a choice's label (any case), or, when the question allows an
answer of the user's own, any other text. For a question allowing several choices, the value is split on
commas (``1,3`` or ``Red, Blue``) unless it is a label as a whole. An empty value leaves the question
unanswered.

When the values run out, the user is asked on the terminal: the header, the question and the numbered
choices go to standard error, the answer is read from standard input. A question that marks a default
(``"default"``: the labels it stands for, as an elicitation form's fields and its first action do) shows
their numbers in brackets, and Enter takes them. End of input (Ctrl-D) dismisses the questions. With
neither values left nor a terminal, the call fails with a message saying so.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING

from ..errors import ToolError
from .common import terminal_attached

if TYPE_CHECKING:
    from ..tools._question import Answers, Question

CUSTOM_LABEL = "Type your own answer"
NO_TERMINAL = (
    "There is no terminal to ask the user, so the question could not be asked. "
    "To answer from a script, pass --answer once per question, in order."
)


@dataclass(eq=False)  # compared by identity
class Choice:
    """What one line of input means for a question."""

    answers: list[str] = field(default_factory=list)
    wants_custom: bool = False
    """The number of the "type your own answer" entry was given: the text is still to be asked."""
    error: str | None = None


def _labels(question: Question) -> list[str]:
    return [str(option.get("label", "")) for option in question.get("options") or []]


def _match(labels: list[str], text: str) -> str | None:
    lowered = text.casefold()
    return next((label for label in labels if label.casefold() == lowered), None)


def interpret(question: Question, text: str) -> Choice:
    """Read ``text`` as an answer to ``question`` (numbers, labels, or the user's own words)."""
    labels = _labels(question)
    custom = question.get("custom", True) is not False
    multiple = bool(question.get("multiple"))
    text = text.strip()
    if not text:
        return Choice()
    whole = _match(labels, text)
    if whole is not None:
        return Choice([whole])
    pieces = [p.strip() for p in text.split(",") if p.strip()] if multiple else [text]
    choice = Choice()
    last = len(labels) + (1 if custom else 0)
    for piece in pieces:
        if piece.isdigit():
            number = int(piece)
            if 1 <= number <= len(labels):
                choice.answers.append(labels[number - 1])
            elif custom and number == len(labels) + 1:
                choice.wants_custom = True
            else:
                return Choice(error=f"{piece} is not one of the choices 1-{last}")
            continue
        label = _match(labels, piece)
        if label is not None:
            choice.answers.append(label)
        elif custom:
            choice.answers.append(piece)
        else:
            return Choice(error=f'"{piece}" is not one of the choices: {", ".join(labels)}')
    choice.answers = list(dict.fromkeys(choice.answers))
    return choice


class TerminalAsker:
    """``ctx.extra["question"]`` for the CLI (see the module docstring)."""

    def __init__(
        self, answers: list[str] | None = None, stdin: IO[str] | None = None, stderr: IO[str] | None = None
    ) -> None:
        self.pending = list(answers or [])
        self.stdin = stdin or sys.stdin
        self.stderr = stderr or sys.stderr
        self._buffer = b""

    @property
    def unused(self) -> list[str]:
        """``--answer`` values no question took."""
        return list(self.pending)

    def interactive(self) -> bool:
        """Whether there is a terminal to ask on."""
        return terminal_attached(self.stdin, self.stderr)

    async def __call__(self, questions: list[Question]) -> Answers | None:
        answers: Answers = []
        for index, question in enumerate(questions):
            if self.pending:
                answers.append(self._scripted(question, self.pending.pop(0)))
                continue
            if not self.interactive():
                if answers:
                    raise ToolError(
                        f"Only {len(answers)} --answer value(s) for {len(questions)} questions, and there is "
                        f'no terminal to ask "{question.get("question", "")}".'
                    )
                raise ToolError(NO_TERMINAL)
            answer = await self._prompt(question, index, len(questions))
            if answer is None:
                return None
            answers.append(answer)
        return answers

    # -- scripted ----------------------------------------------------------------------------------------

    @staticmethod
    def _scripted(question: Question, value: str) -> list[str]:
        choice = interpret(question, value)
        asked = question.get("question", "")
        if choice.error:
            raise ToolError(f'--answer {value!r} does not answer "{asked}": {choice.error}')
        if choice.wants_custom:
            raise ToolError(
                f'--answer {value!r} picks "{CUSTOM_LABEL}" for "{asked}": give the answer\'s text instead'
            )
        return choice.answers

    # -- on the terminal ---------------------------------------------------------------------------------

    def _write(self, text: str) -> None:
        self.stderr.write(text)
        self.stderr.flush()

    async def _prompt(self, question: Question, index: int, count: int) -> list[str] | None:
        labels = _labels(question)
        custom = question.get("custom", True) is not False
        multiple = bool(question.get("multiple"))
        header = str(question.get("header") or "").strip()
        position = f" ({index + 1}/{count})" if count > 1 else ""
        lines = [f"\n? {header}{position}" if header else f"\n?{position}", str(question.get("question", ""))]
        for number, option in enumerate(question.get("options") or [], 1):
            description = str(option.get("description") or "").strip()
            suffix = f" - {description}" if description else ""
            lines.append(f"  {number}. {option.get('label', '')}{suffix}")
        last = len(labels)
        if custom:
            last += 1
            lines.append(f"  {last}. {CUSTOM_LABEL}")
        self._write("\n".join(lines) + "\n")
        span = f"1-{last}" if last > 1 else "1"
        default = _default(question, labels)
        marked = f" [{','.join(str(labels.index(label) + 1) for label in default)}]" if default else ""
        empty = "the default" if default else "none"
        ask = (
            f"Choose one or more of {span}, separated by commas (empty for {empty})"
            if multiple
            else f"Choose {span}"
        )
        ask += f"{marked}: "
        while True:
            self._write(ask)
            line = await self._readline()
            if line is None:
                self._write("\n")
                return None
            if default and not line.strip():  # Enter takes the default
                return list(default)
            choice = interpret(question, line)
            if choice.error:
                self._write(f"{choice.error}\n")
                continue
            if not multiple and not choice.answers and not choice.wants_custom:
                self._write(f"Please choose one of {span}.\n")
                continue
            if choice.wants_custom:
                self._write("Your answer: ")
                text = await self._readline()
                if text is None:
                    self._write("\n")
                    return None
                if not text.strip():
                    continue
                choice.answers.append(text.strip())
            return choice.answers

    async def _readline(self) -> str | None:
        """One line from standard input, without blocking the event loop (``None`` at end of input).

        Reading waits on the event loop, so an interrupt (Ctrl-C) or an abort cancels it at once.
        """
        try:
            fd = self.stdin.fileno()
        except (AttributeError, ValueError, OSError):
            fd = None
        if fd is None:
            import asyncio

            line = await asyncio.to_thread(self.stdin.readline)
            return line or None
        while b"\n" not in self._buffer:
            chunk = await _read_when_ready(fd)
            if not chunk:
                if not self._buffer:
                    return None
                break
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", "replace").rstrip("\r")


def _default(question: Question, labels: list[str]) -> list[str]:
    """The labels ``question`` marks as its default (those it names that are among its choices)."""
    marked = question.get("default")
    named = [marked] if isinstance(marked, str) else marked if isinstance(marked, list) else []
    return [label for label in dict.fromkeys(named) if isinstance(label, str) and label in labels]


async def _read_when_ready(fd: int) -> bytes:
    import asyncio

    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_reader(fd, wake)
    except (NotImplementedError, ValueError, OSError):  # no reader support (e.g. Windows): block
        return await asyncio.to_thread(os.read, fd, 4096)
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    return os.read(fd, 4096)
