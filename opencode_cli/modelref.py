"""The one parser of model strings: ``provider/model`` or a bare, well-known model id."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .record import Value

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

#: Providers some rule knows by name: the provider guess above, the schema profiles
#: (:func:`opencode_cli.schema_profiles.profile_for`) and the websearch rule (``opencode``).
KNOWN_PROVIDERS = frozenset(
    {provider for _, provider in _PROVIDER_BY_PREFIX} | {"azure", "opencode", "opencode-go"}
)

#: Well-known bare model ids, the close matches offered for a bare id no rule recognises.
_WELL_KNOWN_IDS = (
    "gpt-5", "gpt-5-mini", "gpt-5-codex", "gpt-4.1", "gpt-4o", "o3", "o4-mini",
    "claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5", "gemini-2.5-pro", "gemini-2.5-flash",
    "kimi-k2",
)  # fmt: skip


class ModelRef(Value):
    """A model as ``provider/model``; the provider is guessed for a bare, well-known model id. A frozen
    value (:class:`~opencode_cli.record.Value`)."""

    __slots__ = ("id", "provider")
    _fields = ("provider", "id")

    provider: str | None
    id: str

    def __init__(self, provider: str | None, id: str) -> None:
        self._set(provider, id)

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

    def unrecognised(self, providers: Iterable[str] = (), models: Iterable[str] = ()) -> str | None:
        """Why no rule recognises this model, with close matches; ``None`` when one does.

        A bare id is recognised when its provider is guessed or it is one of ``models`` (the models the
        config lists); a ``provider/model`` when the provider is one of :data:`KNOWN_PROVIDERS` or of
        ``providers`` (the configured and registered ones). An unrecognised model still works: it gets
        the default schema profile and ``edit``/``write``, which may not be what was meant.
        """
        import difflib

        listed = list(models)
        if self.provider is None:
            if self.id in listed:
                return None
            close = difflib.get_close_matches(self.id, [*_WELL_KNOWN_IDS, *listed], n=3, cutoff=0.6)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            return (
                f"model {self.id!r} is not recognised: it names no provider and no rule knows the id, so "
                f"the default schema profile applies (write provider/model to name one).{hint}"
            )
        known = sorted(KNOWN_PROVIDERS | set(providers))
        if self.provider in known:
            return None
        close = difflib.get_close_matches(self.provider, known, n=3, cutoff=0.6)
        hint = f" Did you mean: {', '.join(f'{name}/{self.id}' for name in close)}?" if close else ""
        return (
            f"model {str(self)!r} is not recognised: no rule knows the provider {self.provider!r}, so the "
            f"default schema profile applies.{hint}"
        )

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
