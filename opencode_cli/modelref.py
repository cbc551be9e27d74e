"""The one parser of model strings: ``provider/model`` or a bare, well-known model id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Bare model-id prefixes whose provider is known (``gpt-5`` is taken as ``openai/gpt-5``).
_PROVIDER_BY_PREFIX = (
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("gemini", "google"),
    ("kimi", "moonshotai"),
)


@dataclass(frozen=True)
class ModelRef:
    """A model as ``provider/model``; the provider is guessed for a bare, well-known model id."""

    provider: str | None
    id: str

    @classmethod
    def parse(cls, text: str) -> ModelRef:
        """``"openai/gpt-5"`` and ``"gpt-5"`` → (openai, gpt-5); an unknown bare id has no provider."""
        provider, slash, model = text.partition("/")
        if slash:
            return cls(provider, model)
        return cls(_guess_provider(text), text)

    @classmethod
    def coerce(cls, value: ModelRef | str | None) -> ModelRef | None:
        """A :class:`ModelRef` from text, a ModelRef, or ``None`` (empty text is ``None`` too)."""
        if value is None or isinstance(value, ModelRef):
            return value
        return cls.parse(value) if value else None

    def __str__(self) -> str:
        return f"{self.provider}/{self.id}" if self.provider else self.id

    def as_dict(self) -> dict[str, Any]:
        """OpenCode's shape of a message's model: ``providerID`` and ``modelID``."""
        return {"providerID": self.provider, "modelID": self.id}


def _guess_provider(model_id: str) -> str | None:
    lowered = model_id.lower()
    for prefix, provider in _PROVIDER_BY_PREFIX:
        if lowered.startswith(prefix):
            return provider
    return None
