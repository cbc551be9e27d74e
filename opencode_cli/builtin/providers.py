"""The ``providers`` built-in plugin: the model provider kinds ``opencode run`` and ``Session.run`` use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..hookspecs import hookimpl


@hookimpl
def register_providers(register: Callable[[Any], None]) -> None:
    """Register the provider kinds for OpenAI-compatible endpoints (with the built-in ``openai``) and for
    Anthropic and Google (with ``anthropic`` and ``google``); their modules import no SDK: it is imported
    when a model is called."""
    from ..models.anthropic_provider import ANTHROPIC_KIND
    from ..models.google_provider import GOOGLE_KIND
    from ..models.openai_compatible import OPENAI_COMPATIBLE

    register(OPENAI_COMPATIBLE)
    register(ANTHROPIC_KIND)
    register(GOOGLE_KIND)
