"""The limits of well-known models of the native providers, used when the provider's ``models`` table does
not give them (``[provider.NAME.models.ID] limit`` always wins), figures as the providers publish them;
and the variants (``run --variant``: how hard a model thinks) the built-in providers offer, as OpenCode
names them, when a model's table defines none."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

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


#: The built-in providers' variants: a name and the request options it adds (in the provider's option
#: names: the Chat Completions body, Anthropic's ``thinking``, Gemini's ``thinkingConfig``).
KNOWN_VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    "openai": {effort: {"reasoning_effort": effort} for effort in ("minimal", "low", "medium", "high")},
    "anthropic": {
        "high": {"thinking": {"type": "enabled", "budget_tokens": 16_000}},
        "max": {"thinking": {"type": "enabled", "budget_tokens": 31_999}},
    },
    "google": {
        "high": {"thinkingConfig": {"includeThoughts": True, "thinkingBudget": 16_000}},
        "max": {"thinkingConfig": {"includeThoughts": True, "thinkingBudget": 24_576}},
    },
}


def variants_of(provider: str, info: ModelInfo) -> dict[str, dict[str, Any]]:
    """The variants of a model: its table's ``variants``, else its built-in provider's (none else)."""
    return dict(info.variants) if info.variants else dict(KNOWN_VARIANTS.get(provider, {}))


def with_variant(provider: str, info: ModelInfo, variant: str | None) -> ModelInfo:
    """``info`` with the options of its ``variant`` laid over its own (``None``: ``info`` as it is); a
    :class:`~opencode_cli.models.errors.ModelChoiceError` naming the variants there are for an unknown one."""
    if variant is None:
        return info
    offered = variants_of(provider, info)
    if variant not in offered:
        from .errors import ModelChoiceError

        names = ", ".join(offered) or "none"
        raise ModelChoiceError(f"model {provider}/{info.id} has no variant {variant!r} (variants: {names})")
    return replace(info, options={**info.options, **offered[variant]})
