"""What a model step used, in OpenCode's shape: ``tokens = {input, output, reasoning, cache: {read,
write}}`` from the usage a provider reported (OpenAI's, Anthropic's or Gemini's names), and its ``cost`` in
dollars from the model's ``cost`` table. An assistant message records both (``opencode stats`` adds them up).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _count(usage: Mapping[str, Any], *path: str) -> int:
    node: Any = usage
    for key in path:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, int) and not isinstance(node, bool) and node > 0 else 0


def tokens_of(usage: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """OpenCode's ``tokens`` of one step's ``usage`` (``None`` when the provider reported none). ``input``
    leaves out the tokens read from the cache, which ``cache.read`` counts, as OpenCode does."""
    if not usage:
        return None
    cached = _count(usage, "prompt_tokens_details", "cached_tokens") + _count(
        usage, "cache_read_input_tokens"
    )
    prompt = _count(usage, "prompt_tokens") + _count(usage, "input_tokens")
    if "prompt_tokens" in usage:  # OpenAI counts the cached tokens in prompt_tokens; Anthropic does not
        prompt = max(0, prompt - cached)
    return {
        "input": prompt,
        "output": _count(usage, "completion_tokens") + _count(usage, "output_tokens"),
        "reasoning": _count(usage, "completion_tokens_details", "reasoning_tokens"),
        "cache": {"read": cached, "write": _count(usage, "cache_creation_input_tokens")},
    }


def cost_of(tokens: Mapping[str, Any] | None, prices: Mapping[str, float]) -> float:
    """Dollars for ``tokens`` at ``prices`` per million (0 when either is unknown)."""
    if not tokens or not prices:
        return 0.0
    cache = tokens.get("cache") or {}
    spent = (
        tokens.get("input", 0) * prices.get("input", 0.0)
        + (tokens.get("output", 0) + tokens.get("reasoning", 0)) * prices.get("output", 0.0)
        + cache.get("read", 0) * prices.get("cache_read", prices.get("input", 0.0))
        + cache.get("write", 0) * prices.get("cache_write", prices.get("input", 0.0))
    )
    return spent / 1_000_000
