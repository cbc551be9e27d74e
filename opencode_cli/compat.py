"""Whether an installed plugin was built for this opencode-tools: its declared requirement, checked at load.

A plugin says which versions of the plugin API it was built for the way any Python package says what it
needs: a dependency on ``opencode-tools`` in its ``pyproject.toml`` (``dependencies =
["opencode-tools>=0.1,<0.2"]``), which its distribution's metadata carries as ``Requires-Dist``. pip reads
it at install time; :func:`requirement` reads it when entry points are scanned (the answer is cached with
them), and :func:`mismatch` compares it with this version before the plugin is imported, so a plugin built
for another version is refused whole, never half-loaded.

The plugin API's version is the distribution's version (:data:`opencode_cli.__version__`): see
``docs/plugin-api.md`` for the promise it carries. :mod:`packaging` is imported only when a distribution
with an ``opencode`` entry point names ``opencode-tools`` among its requirements.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from . import DISTRIBUTION, __version__

__all__ = ["DISTRIBUTION", "mismatch", "requirement", "series"]

#: A requirement line that may name opencode-tools (any spelling PEP 503 normalises to it), before parsing.
_OURS = r"\s*opencode[-_.]+tools(?![A-Za-z0-9])"


def requirement(requires: Iterable[str] | None) -> str | None:
    """The version specifier a distribution's ``Requires-Dist`` lines put on opencode-tools (``">=0.1"``;
    ``""`` for a bare ``opencode-tools``), or ``None`` when it names none. A line under a marker that does
    not hold here (an extra, another platform) does not count; a line that does not parse is skipped, as
    pip would have refused it."""
    specifiers = []
    for line in requires or ():
        if not re.match(_OURS, line, re.IGNORECASE):  # compiled on first use: re keeps it
            continue
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            parsed = Requirement(line)
        except InvalidRequirement:
            continue
        if parsed.marker is not None and not parsed.marker.evaluate({"extra": ""}):  # here, no extra
            continue
        specifiers.append(str(parsed.specifier))
    if not specifiers:
        return None
    return ",".join(sorted(filter(None, specifiers)))


def mismatch(specifier: str | None, version: str = __version__) -> str | None:
    """Why a plugin whose requirement on opencode-tools is ``specifier`` cannot be loaded by ``version``
    (both named), or ``None`` when it can (no requirement, or one ``version`` meets; a pre-release of
    ours counts as the release it leads to)."""
    if not specifier:
        return None
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        wanted = SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
    if wanted.contains(version, prereleases=True):
        return None
    return (
        f"it requires {DISTRIBUTION}{specifier}, and this is {DISTRIBUTION} {version}: install a release of "
        f"the plugin built for {version}, or the {DISTRIBUTION} it asks for"
    )


def series(version: str = __version__) -> str:
    """The requirement of a plugin built for ``version``: that release or a later one of the same series,
    which keeps the plugin API (``0.1.0`` → ``>=0.1,<0.2``; ``1.4.2`` → ``>=1.4,<2``). A release that breaks
    the plugin API starts a new series: a new major version, or a new minor one while the major is 0."""
    parts = [int(part) for part in re.findall(r"\d+", version)[:2]] + [0, 0]
    major, minor = parts[0], parts[1]
    upper = f"0.{minor + 1}" if major == 0 else str(major + 1)
    return f">={major}.{minor},<{upper}"
