"""``question``: ask the user questions with options and wait for the answers (builtin spec §14).

There is no permission ask (the default rules hide the tool from every agent but build and plan). The
questions go to the host's asker (:mod:`opencode_cli.tools._question`), always with ``custom: true``: the
user may type an answer of their own. As upstream, the header's "max 30 chars" is not enforced, and an
item's extra keys (``custom`` included) are dropped.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..context import ToolContext
from ..results import ToolResult
from ._arguments import Arguments
from ._question import Answers, ask_user


class QuestionOption(Arguments):
    # no docstring: it would become a description in the schema

    label: str = Field(description="The text of the choice as the user sees it (1-5 words, concise)")
    description: str = Field(description="What picking this choice means")


class QuestionItem(Arguments):
    # no docstring: it would become a description in the schema

    question: str = Field(description="The full question")
    header: str = Field(description="A very short label for the question (max 30 chars)")
    options: list[QuestionOption] = Field(description="The choices offered")
    multiple: bool | None = Field(None, description="Let the user pick more than one choice")


class QuestionParameters(Arguments):
    """Arguments of the question tool."""

    questions: list[QuestionItem] = Field(description="The questions to ask")


def output(questions: list[str], answers: Answers) -> str:
    """The text the model receives: each question with its answers (or ``Unanswered``)."""
    items = ", ".join(
        f'"{question}"="{", ".join(answer) if answer else "Unanswered"}"'
        for question, answer in zip(questions, answers, strict=True)
    )
    return f"User has answered your questions: {items}. You can now continue with the user's answers in mind."


def title(count: int) -> str:
    """``Asked 1 question`` / ``Asked N questions``."""
    return f"Asked {count} question" + ("" if count == 1 else "s")


async def execute(params: QuestionParameters, ctx: ToolContext) -> ToolResult:
    """Ask, wait for the answers, report them."""
    questions = [
        {
            "question": item.question,
            "header": item.header,
            "options": [{"label": o.label, "description": o.description} for o in item.options],
            "multiple": bool(item.multiple),
            "custom": True,
        }
        for item in params.questions
    ]
    answers = await ask_user(ctx, questions)
    return ToolResult(
        title=title(len(questions)),
        output=output([item.question for item in params.questions], answers),
        metadata={"answers": answers},
    )


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    return {"parameters": QuestionParameters, "execute": execute}
