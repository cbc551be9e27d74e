"""``ModelError`` and every line it says: each message is built here, and only here, as one line."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ..errors import OpencodeError


class ModelError(OpencodeError):
    """A model could not be opened or called; ``str()`` is one line saying why (and what to do)."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


class ModelChoiceError(ModelError):
    """The model asked for cannot be chosen: none is named, its provider or the model is unknown, or the
    provider is unsupported. A usage error (``opencode run`` exits 2 and starts no session)."""


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines included) made one space."""
    return " ".join(text.split())


def _choices(label: str, names: Iterable[str], wanted: str) -> str:
    """`` (did you mean 'x'? <label>: a, b)`` or `` (<label>: a, b)``."""
    names = sorted(names)
    close = difflib.get_close_matches(wanted, names, n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return f" ({hint}{label}: {', '.join(names) or 'none'})"


def no_model() -> ModelChoiceError:
    """Neither the caller nor the config named a model."""
    return ModelChoiceError("no model: pass --model or set model in opencode.toml")


def no_provider(model_id: str, providers: Iterable[str]) -> ModelChoiceError:
    """A bare model id that no provider (or more than one) lists."""
    names = ", ".join(sorted(providers)) or "none"
    return ModelChoiceError(
        f"model '{model_id}' names no provider: write it as provider/model (providers: {names})"
    )


def unknown_provider(name: str, providers: Iterable[str]) -> ModelChoiceError:
    """No provider has that name."""
    return ModelChoiceError(f"unknown provider '{name}'" + _choices("providers", providers, name))


def unknown_model(provider: str, model_id: str, models: Iterable[str]) -> ModelChoiceError:
    """The provider lists its models, and this is not one of them."""
    return ModelChoiceError(
        f"unknown model '{model_id}' for provider {provider}" + _choices("models", models, model_id)
    )


def unsupported(provider: str, npm: str, supported: Iterable[str]) -> ModelChoiceError:
    """A ``[provider.NAME]`` table whose ``npm`` package no registered factory serves."""
    served = ", ".join(sorted(supported)) or "none"
    return ModelChoiceError(
        f"provider {provider} uses npm package {npm}, which is not supported (supported: {served})"
    )


def missing_key(provider: str, env_var: str) -> ModelError:
    """The provider's endpoint needs an API key and none is configured."""
    return ModelError(
        f"no API key for provider {provider}: set {env_var} or [provider.{provider}.options] apiKey"
    )


def no_base_url(provider: str) -> ModelError:
    """A configured provider with no endpoint to talk to."""
    return ModelError(f"no baseURL for provider {provider}: set [provider.{provider}.options] baseURL")


def not_connected(provider: str) -> ModelError:
    """A provider's ``chat`` was called before its ``connect``."""
    return ModelError(f"provider {provider} is not connected: open the model with open_model()")


def unreachable(url: str, reason: str) -> ModelError:
    """The endpoint could not be connected to (or the connection failed before an answer)."""
    return ModelError(f"cannot reach {url}: {reason}")


def no_answer(provider: str, seconds: float | None) -> ModelError:
    """The endpoint accepted the request and did not answer in time."""
    within = f" within {seconds:g} s" if seconds is not None else ""
    return ModelError(f"{provider} did not answer{within}")


def http_status(provider: str, status: int, phrase: str, message: str | None) -> ModelError:
    """The endpoint answered with an HTTP error: ``local: 401 Unauthorized: <server message>``."""
    detail = f": {message}" if message else ""
    return ModelError(f"{provider}: {status} {phrase}{detail}")


def stream_error(provider: str, message: str) -> ModelError:
    """The endpoint reported an error inside the stream."""
    return ModelError(f"{provider}: the stream reported an error: {message}")


def broke_off(provider: str, reason: str) -> ModelError:
    """The stream ended before the reply was complete."""
    return ModelError(f"the stream from {provider} broke off: {reason}")


def plugin_failed(detail: str) -> ModelError:
    """A plugin's ``register_providers`` raised."""
    return ModelError(f"a plugin failed in register_providers: {detail}")
