"""The providers a project can use: what plugins register, and the ``[provider.NAME]`` tables.

Who wins for a name: a :class:`Provider` a plugin registered; else a built-in definition of a factory,
with a table of the same name laid over it; else the table alone. pluggy calls the last-loaded plugin
first and the first registration of a name (or an npm package) wins, so a plugin replaces a built-in.
A table is built by the factory serving its ``npm`` (default :data:`DEFAULT_NPM`); a table whose package
no factory serves is listed with the error it gives when used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from . import errors
from .base import ModelInfo
from .provider import Provider, ProviderFactory

if TYPE_CHECKING:
    from ..modelref import ModelRef
    from ..project import Project
    from .config import ProviderConfig

#: The package of a ``[provider.NAME]`` table that names none (as in OpenCode).
DEFAULT_NPM = "@ai-sdk/openai-compatible"

Origin = Literal["plugin", "builtin", "config"]


@dataclass(frozen=True)
class CatalogEntry:
    """One provider as listed: its ``provider``, or the ``error`` using it gives."""

    name: str
    origin: Origin
    npm: str | None
    provider: Provider | None
    error: errors.ModelError | None = None

    @property
    def supported(self) -> bool:
        """Whether the provider can be used."""
        return self.provider is not None


class Catalog:
    """Every provider of a project by name, and the lookups that turn a model string into one."""

    def __init__(self, entries: Mapping[str, CatalogEntry]) -> None:
        self._entries = dict(sorted(entries.items()))

    @classmethod
    def build(
        cls, registered: Iterable[Provider | ProviderFactory], tables: Mapping[str, ProviderConfig]
    ) -> Catalog:
        """The catalog of what plugins registered (in pluggy's call order) and the config's tables."""
        plugins: dict[str, Provider] = {}
        factories: dict[str, ProviderFactory] = {}
        builtins: dict[str, ProviderConfig] = {}
        for item in registered:
            if isinstance(item, Provider):
                plugins.setdefault(item.name, item)
                continue
            for package in item.npm:
                factories.setdefault(package, item)
            for definition in item.builtins:
                builtins.setdefault(definition.name, definition)
        entries = {name: CatalogEntry(name, "plugin", None, provider) for name, provider in plugins.items()}
        for name, definition in builtins.items():
            if name not in entries:
                table = tables.get(name)
                config = table.over(definition) if table is not None else definition
                entries[name] = _built(config, "builtin", factories)
        for name, table in tables.items():
            if name not in entries:
                entries[name] = _built(table, "config", factories)
        return cls(entries)

    @property
    def entries(self) -> list[CatalogEntry]:
        """Every provider, by name."""
        return list(self._entries.values())

    def names(self) -> list[str]:
        """The providers' names, sorted."""
        return list(self._entries)

    def get(self, name: str) -> Provider:
        """The provider called ``name``; :class:`ModelError` when there is none or it is unsupported."""
        entry = self._entries.get(name)
        if entry is None:
            raise errors.unknown_provider(name, self._entries)
        if entry.provider is None:
            assert entry.error is not None
            raise entry.error
        return entry.provider

    def resolve(self, ref: ModelRef) -> tuple[Provider, ModelInfo]:
        """The provider and model of ``ref``. A bare id is looked up in the providers that list their
        models; a provider that lists its models refuses any other id; one that lists none takes any."""
        if ref.provider is None:
            listing = [
                entry.provider
                for entry in self._entries.values()
                if entry.provider is not None and ref.id in entry.provider.models()
            ]
            if len(listing) != 1:
                raise errors.no_provider(ref.id, self._entries)
            provider = listing[0]
        else:
            provider = self.get(ref.provider)
        models = provider.models()
        if ref.id in models:
            return provider, models[ref.id]
        if models:
            raise errors.unknown_model(provider.name, ref.id, models)
        return provider, ModelInfo(ref.id)


def _built(config: ProviderConfig, origin: Origin, factories: Mapping[str, ProviderFactory]) -> CatalogEntry:
    package = config.npm or DEFAULT_NPM
    factory = factories.get(package)
    if factory is None:
        error = errors.unsupported(config.name, package, factories)
        return CatalogEntry(config.name, origin, package, None, error)
    return CatalogEntry(config.name, origin, package, factory.build(config))


async def load_catalog(project: Project) -> Catalog:
    """Ask every plugin for its providers (``register_providers``) and build the project's catalog with
    the current generation's ``[provider.NAME]`` tables."""
    from ..plugins import describe_exception

    registered: list[Provider | ProviderFactory] = []

    def register(item: Provider | ProviderFactory) -> None:
        if not isinstance(item, Provider | ProviderFactory):
            raise TypeError(f"register() takes a Provider or a ProviderFactory, not {type(item).__name__}")
        registered.append(item)

    try:
        await project.plugins.acall("register_providers", register=register, project=project)
    except errors.ModelError:
        raise
    except Exception as error:
        raise errors.plugin_failed(describe_exception(error)) from error
    return Catalog.build(registered, project.generation.providers)
