"""The ``question`` tool's asker for a client that takes elicitation forms: the questions as one form.

A question becomes a field of choices (a list of them when several may be picked) and, when answers of
the user's own are allowed, a text field beside it. Declining or cancelling the form dismisses the
questions. A client without elicitation gets no asker, so ``question`` is not offered to it.
"""

from __future__ import annotations

from typing import Any

from .calls import CURRENT

Question = dict[str, Any]


def form_for(questions: list[Question]) -> dict[str, Any]:
    """The elicitation schema for ``questions``: ``q1``, ``q2``… (and ``q1_own``… for own answers)."""
    properties: dict[str, Any] = {}
    for number, question in enumerate(questions, 1):
        labels = [str(option.get("label", "")) for option in question.get("options") or []]
        title = str(question.get("header") or f"Question {number}")
        text = str(question.get("question") or "")
        if labels and question.get("multiple"):
            properties[f"q{number}"] = {
                "type": "array",
                "title": title,
                "description": text,
                "items": {"type": "string", "enum": labels},
            }
        elif labels:
            properties[f"q{number}"] = {"type": "string", "title": title, "description": text, "enum": labels}
        if question.get("custom", True) or not labels:
            properties[f"q{number}_own"] = {
                "type": "string",
                "title": f"{title}: your own answer" if labels else title,
                "description": "Optional: an answer of your own." if labels else text,
            }
    return {"type": "object", "properties": properties}


def answers_from(content: dict[str, Any], count: int) -> list[list[str]]:
    """One list of answers per question from the accepted form's ``content``."""
    answers = []
    for number in range(1, count + 1):
        picked = content.get(f"q{number}")
        chosen = [picked] if isinstance(picked, str) else [a for a in picked or [] if isinstance(a, str)]
        own = content.get(f"q{number}_own")
        if isinstance(own, str) and own.strip():
            chosen.append(own.strip())
        answers.append([answer for answer in chosen if answer])
    return answers


async def ask_questions(questions: list[Question]) -> list[list[str]] | None:
    """Put ``questions`` to the person behind the current call's client; ``None``: dismissed."""
    call = CURRENT.get()
    if call is None or not call.can_elicit():
        return None
    message = "\n\n".join(str(question.get("question") or "") for question in questions)
    try:
        result = await call.elicit(message or "OpenCode has a question", form_for(questions))
    except Exception:  # the client failed to answer
        return None
    if result is None or result.action != "accept":
        return None
    return answers_from(result.content or {}, len(questions))
