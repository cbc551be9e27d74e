"""``[provider.NAME]`` in ``opencode.toml``: model providers in OpenCode's shape.

::

    model = "local/qwen3"

    [provider.local]
    name = "My llama.cpp"                    # shown in lists (optional)
    npm = "@ai-sdk/openai-compatible"        # the default; "@ai-sdk/openai" too; others are unsupported
    env = ["LLAMA_KEY"]                      # where the key may come from (default: LOCAL_API_KEY)

    [provider.local.options]
    baseURL = "http://127.0.0.1:8080/v1"
    apiKey = "{env:LLAMA_KEY}"               # else the env variables above
    headers = { "X-Team" = "tools" }
    timeout = 300000                         # ms for each request (false: none)
    includeUsage = true                      # ask for token usage at the end of the stream

    [provider.local.models.qwen3]
    name = "Qwen 3"
    id = "qwen3-32b-q4"                      # the name sent to the API, when it differs
    limit = { context = 32768, output = 8192 }
    options = { top_k = 20 }                 # extra fields of every request body

``{env:VAR}`` in any string of a provider table is replaced by the variable of the project's environment
(an empty string when unset), as OpenCode does. A misspelt key gets a warning naming the close match;
keys of OpenCode's schema that we do not use (``whitelist``, ``cost``…) are accepted silently; a wrong
type is a :class:`~opencode_cli.errors.ConfigError` naming the key path. Built-in providers (``openai``)
are not here: their factory brings them, and a table of the same name is laid over them
(:meth:`ProviderConfig.over`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..errors import ConfigError
from .base import Limits, ModelInfo

#: Keys of a provider table we read, and OpenCode's keys we accept without using them.
PROVIDER_KEYS = frozenset({"name", "npm", "env", "options", "models"})
OPENCODE_PROVIDER_KEYS = frozenset({"id", "api", "whitelist", "blacklist"})
#: Keys of ``[provider.NAME.options]`` we read.
OPTION_KEYS = frozenset({"baseURL", "apiKey", "headers", "timeout", "includeUsage"})
#: Keys of a model table we read, and OpenCode's (models.dev metadata) we accept without using them.
MODEL_KEYS = frozenset({"id", "name", "limit", "options", "headers", "cost", "variants"})
#: A model's ``cost`` table (OpenCode's): US dollars per million tokens of each kind.
COST_KEYS = frozenset({"input", "output", "cache_read", "cache_write"})
OPENCODE_MODEL_KEYS = frozenset(
    {
        "family", "release_date", "attachment", "reasoning", "temperature", "tool_call", "interleaved",
        "cost", "modalities", "experimental", "status", "provider",
    }
)  # fmt: skip
LIMIT_KEYS = frozenset({"context", "input", "output"})

#: OpenCode's timeout when ``options.timeout`` is not set: five minutes.
DEFAULT_TIMEOUT_MS = 300_000

_ENV_REFERENCE = re.compile(r"\{env:([^}]*)\}")


@dataclass(frozen=True)
class ProviderConfig:
    """One provider's settings: a ``[provider.NAME]`` table, a built-in definition, or both laid over
    each other. ``None`` (or empty) means "not set here"."""

    name: str
    title: str | None = None
    """The table's ``name``: how the provider is shown."""
    npm: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    env: tuple[str, ...] = ()
    """Environment variables the key may come from, in order (default: ``<NAME>_API_KEY``)."""
    headers: dict[str, str] = field(default_factory=dict)
    timeout_ms: int | Literal[False] | None = None
    include_usage: bool | None = None
    models: dict[str, ModelInfo] = field(default_factory=dict)
    key_required: bool = False
    """Whether the endpoint needs a key (a built-in one does; an endpoint you configure may take none)."""

    @property
    def key_env(self) -> tuple[str, ...]:
        """The environment variables the API key is looked up in, in order."""
        return self.env or (default_key_env(self.name),)

    def key(self, env: Mapping[str, str]) -> str | None:
        """The API key: ``options.apiKey``, else the first of :attr:`key_env` that is set; ``None``."""
        if self.api_key:
            return self.api_key
        return next((env[name] for name in self.key_env if env.get(name)), None)

    @property
    def timeout(self) -> float | None:
        """Seconds a request may wait for data (``None``: no limit)."""
        if self.timeout_ms is False:
            return None
        return (self.timeout_ms or DEFAULT_TIMEOUT_MS) / 1000

    def over(self, base: ProviderConfig) -> ProviderConfig:
        """This table laid over ``base`` (a built-in definition): what is set here wins; headers and
        models are merged. A key stays required only while the base's endpoint is kept."""
        return replace(
            base,
            title=self.title or base.title,
            npm=self.npm or base.npm,
            base_url=self.base_url or base.base_url,
            api_key=self.api_key or base.api_key,
            env=self.env or base.env,
            headers={**base.headers, **self.headers},
            timeout_ms=self.timeout_ms if self.timeout_ms is not None else base.timeout_ms,
            include_usage=self.include_usage if self.include_usage is not None else base.include_usage,
            models={**base.models, **self.models},
            key_required=base.key_required and self.base_url is None,
        )


def default_key_env(name: str) -> str:
    """``<NAME>_API_KEY``: the name upper-cased, every character but a letter or digit made ``_``."""
    return re.sub(r"[^A-Z0-9]", "_", name.upper()) + "_API_KEY"


def substitute_env(value: Any, env: Mapping[str, str]) -> Any:
    """``value`` with ``{env:VAR}`` replaced in every string inside it (unset variables: empty)."""
    if isinstance(value, str):
        return _ENV_REFERENCE.sub(lambda match: env.get(match.group(1).strip(), ""), value)
    if isinstance(value, Mapping):
        return {key: substitute_env(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [substitute_env(item, env) for item in value]
    return value


def providers(
    config: Mapping[str, Any], env: Mapping[str, str]
) -> tuple[dict[str, ProviderConfig], list[str]]:
    """The ``[provider.NAME]`` tables of a merged config, in config order, and warnings for keys that
    look misspelt."""
    table = config.get("provider")
    if table is None:
        return {}, []
    if not isinstance(table, Mapping):
        raise ConfigError("provider must be a table of providers ([provider.NAME])")
    found: dict[str, ProviderConfig] = {}
    warnings: list[str] = []
    for name, value in table.items():
        where = f"provider.{name}"
        value = substitute_env(_table(value, where), env)
        warnings.extend(_unknown(value, PROVIDER_KEYS, OPENCODE_PROVIDER_KEYS, where))
        options = _table(value.get("options", {}), f"{where}.options")
        warnings.extend(_unknown(options, OPTION_KEYS, frozenset(), f"{where}.options"))
        models = _table(value.get("models", {}), f"{where}.models")
        found[str(name)] = ProviderConfig(
            name=str(name),
            title=_string(value.get("name"), f"{where}.name"),
            npm=_string(value.get("npm"), f"{where}.npm"),
            base_url=_url(options.get("baseURL"), f"{where}.options.baseURL"),
            api_key=_string(options.get("apiKey"), f"{where}.options.apiKey"),
            env=_names(value.get("env"), f"{where}.env"),
            headers=_strings(options.get("headers"), f"{where}.options.headers"),
            timeout_ms=_timeout(options.get("timeout"), f"{where}.options.timeout"),
            include_usage=_flag(options.get("includeUsage"), f"{where}.options.includeUsage"),
            models={
                str(model_id): _model(str(model_id), model, f"{where}.models.{model_id}", warnings)
                for model_id, model in models.items()
            },
        )
    return found, warnings


def _model(model_id: str, value: Any, where: str, warnings: list[str]) -> ModelInfo:
    value = _table(value, where)
    warnings.extend(_unknown(value, MODEL_KEYS, OPENCODE_MODEL_KEYS, where))
    limit = _table(value.get("limit", {}), f"{where}.limit")
    warnings.extend(_unknown(limit, LIMIT_KEYS, frozenset(), f"{where}.limit"))
    return ModelInfo(
        id=model_id,
        name=_string(value.get("name"), f"{where}.name"),
        api_id=_string(value.get("id"), f"{where}.id"),
        limits=Limits(**{key: _count(limit.get(key), f"{where}.limit.{key}") for key in sorted(LIMIT_KEYS)}),
        options=dict(_table(value.get("options", {}), f"{where}.options")),
        headers=_strings(value.get("headers"), f"{where}.headers"),
        cost=_cost(value.get("cost", {}), f"{where}.cost", warnings),
        variants={
            str(name): dict(_table(options, f"{where}.variants.{name}"))
            for name, options in _table(value.get("variants", {}), f"{where}.variants").items()
        },
    )


def _cost(value: Any, where: str, warnings: list[str]) -> dict[str, float]:
    """``cost = {input, output, cache_read, cache_write}``: dollars per million tokens (non-negative)."""
    table = _table(value, where)
    warnings.extend(_unknown(table, COST_KEYS, frozenset(), where))
    found = {}
    for key in sorted(COST_KEYS & set(table)):
        price = table[key]
        if isinstance(price, bool) or not isinstance(price, int | float) or price < 0:
            raise ConfigError(f"{where}.{key} must be a number of dollars per million tokens, not {price!r}")
        found[key] = float(price)
    return found


# -- checks: each names the key path it is about ----------------------------------------------------------


def _unknown(
    table: Mapping[str, Any], known: frozenset[str], accepted: frozenset[str], where: str
) -> Iterator[str]:
    for key in table:
        if key in known or key in accepted:
            continue
        close = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
        hint = f" (did you mean '{where}.{close[0]}'?)" if close else ""
        yield f"unknown config key '{where}.{key}'{hint}; it is ignored"


def _table(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a table, not {value!r}")
    return value


def _string(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{where} must be a string, not {value!r}")
    return value


def _url(value: Any, where: str) -> str | None:
    text = _string(value, where)
    if text is not None and not text.startswith(("http://", "https://")):
        raise ConfigError(f"{where} must be an http:// or https:// URL, not {text!r}")
    return text


def _strings(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(item, str) for item in value.values()):
        raise ConfigError(f"{where} must be a table of strings, not {value!r}")
    return {str(key): item for key, item in value.items()}


def _names(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{where} must be a list of environment variable names, not {value!r}")
    return tuple(value)


def _flag(value: Any, where: str) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise ConfigError(f"{where} must be true or false, not {value!r}")
    return value


def _count(value: Any, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where} must be a number of tokens (a whole number, 0 or more), not {value!r}")
    return value


def _timeout(value: Any, where: str) -> int | Literal[False] | None:
    if value is None or value is False:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where} must be a positive number of milliseconds or false, not {value!r}")
    return value
