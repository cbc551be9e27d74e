"""The limits of well-known models of the native providers, used when the provider's ``models`` table does
not give them (``[provider.NAME.models.ID] limit`` always wins). Figures as the providers publish them."""

from __future__ import annotations

from dataclasses import replace

from .base import Limits, ModelInfo

#: Model id prefixes (longest match wins) and their context and output limits, in tokens.
KNOWN_LIMITS: dict[str, Limits] = {
    "claude-opus-4": Limits(context=200_000, output=32_000),
    "claude-sonnet-4": Limits(context=200_000, output=64_000),
    "claude-haiku-4": Limits(context=200_000, output=64_000),
    "claude-3-7-sonnet": Limits(context=200_000, output=64_000),
    "claude-3-5-haiku": Limits(context=200_000, output=8_192),
    "gemini-2.5-pro": Limits(context=1_048_576, output=65_536),
    "gemini-2.5-flash": Limits(context=1_048_576, output=65_536),
    "gemini-2.0-flash": Limits(context=1_048_576, output=8_192),
}


def with_known_limits(info: ModelInfo) -> ModelInfo:
    """``info`` with the known limits of its model filled in where its table left them unset."""
    name = info.request_id
    matches = [prefix for prefix in KNOWN_LIMITS if name.startswith(prefix)]
    if not matches:
        return info
    known = KNOWN_LIMITS[max(matches, key=len)]
    limits = info.limits
    return replace(
        info,
        limits=Limits(
            context=limits.context if limits.context is not None else known.context,
            input=limits.input,
            output=limits.output if limits.output is not None else known.output,
        ),
    )
