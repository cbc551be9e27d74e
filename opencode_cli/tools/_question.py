"""How the ``question`` and ``plan_exit`` tools reach the user: the host's *question asker*.

OpenCode publishes a ``question.asked`` request and waits for the UI's reply. Here the host hands the
tools a callable in ``ctx.extra["question"]`` (a :class:`~opencode_cli.session.Session` copies its
``extra`` into every call's context)::

    async def ask(questions: list[dict]) -> list[list[str]] | None: ...

    session = project.session("build", extra={"question": ask})

Each question is a dict ``{"question", "header", "options": [{"label", "description"}], "multiple",
"custom"}`` (``custom``: whether an answer of the user's own, not one of the labels, is allowed). The
asker returns one list per question, in order, holding the chosen labels and/or typed answers (an empty
list: that question was left unanswered), or ``None`` when the user dismissed the questions (raising
:class:`QuestionDismissedError` does the same). A plain function works too; its result may be an
awaitable. ``opencode tools run`` supplies a terminal prompt, or the ``--answer`` values
(:mod:`opencode_cli.cli.question_prompt`).

Without an asker the tools fail with :data:`NO_ASKER`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..context import ToolContext
from ..errors import QuestionDismissedError, ToolError

EXTRA_KEY = "question"
DISMISSED = QuestionDismissedError.MESSAGE
NO_ASKER = (
    "The user cannot be asked questions here: this host has no way to reach them. Carry on with your "
    "best judgement, and state the assumptions you make."
)

Question = dict[str, Any]
Answers = list[list[str]]
Asker = Callable[[list[Question]], Awaitable[Answers | None] | Answers | None]


def _answers(value: Any, count: int) -> Answers:
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise ToolError(f"the question asker returned {type(value).__name__}, not a list of answers")
    result: Answers = []
    for item in list(value)[:count]:
        if isinstance(item, str):
            item = [item]
        if not isinstance(item, Sequence) or not all(isinstance(a, str) for a in item):
            raise ToolError("the question asker returned an answer that is not a list of strings")
        result.append(list(item))
    return result + [[] for _ in range(count - len(result))]


async def ask_user(ctx: ToolContext, questions: list[Question]) -> Answers:
    """Put ``questions`` to the user through the host's asker; one answer list per question.

    Raises :class:`QuestionDismissedError` when the user dismissed them, and a :class:`ToolError` with
    :data:`NO_ASKER` when the host cannot ask.
    """
    if not questions:
        return []
    asker = ctx.extra.get(EXTRA_KEY)
    if asker is None:
        raise ToolError(NO_ASKER)
    result = asker(questions)
    if inspect.isawaitable(result):
        result = await result
    if result is None:
        raise QuestionDismissedError()
    return _answers(result, len(questions))
