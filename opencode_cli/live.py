"""Live progress of a running call, as hosts show it."""

from __future__ import annotations


def added_output(before: str, after: str) -> str:
    """What a live ``output`` adds to the one reported before. bash's live preview keeps only the tail of
    a long output, so the text may slide: the new part is found after the last 256 characters seen."""
    if after.startswith(before):
        return after[len(before) :]
    probe = before[-256:]
    at = after.find(probe) if probe else -1
    return after[at + len(probe) :] if at >= 0 else after
