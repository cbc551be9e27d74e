"""Resource URIs as permissions judge them: dot segments and duplicate slashes taken out of the path.

``file:///project/../out/x`` names ``file:///out/x``, and so does ``file:///project/%2e%2e/out/x``: a rule
allowing ``mcp:NAME:file:///project/*`` must not allow either. :func:`normalize_uri` percent-decodes the
dot segments (only those: other escapes stay as written), removes ``.`` segments and empty ones (``//``),
and resolves ``..``. A path whose ``..`` climbs above its root cannot be normalised: it is reported, and
kept as written.
"""

from __future__ import annotations

import re
from typing import NamedTuple

#: ``scheme:`` ``//authority`` path ``?query#fragment`` (RFC 3986, appendix B, with the scheme required).
_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*:)(//[^/?#]*)?([^?#]*)(.*)$", re.DOTALL)
_DOT = re.compile(r"(?:\.|%2[eE]){1,2}")


class NormalUri(NamedTuple):
    """A URI with its path normalised; ``climbs``: its ``..`` segments went above the root (then
    ``uri`` is the URI as written)."""

    uri: str
    climbs: bool


def _dots(segment: str) -> str:
    """``.``/``..`` for a dot segment, percent-encoded or not; any other segment unchanged."""
    return segment.replace("%2e", ".").replace("%2E", ".") if _DOT.fullmatch(segment) else segment


def normalize_uri(uri: str) -> NormalUri:
    """``uri`` with its path's dot segments and empty segments resolved (see the module docstring)."""
    found = _URI.match(uri)
    if found is None:
        return NormalUri(uri, False)
    scheme, authority, path, rest = found.group(1), found.group(2) or "", found.group(3), found.group(4)
    if not path:
        return NormalUri(uri, False)
    absolute = path.startswith("/")
    segments = [_dots(segment) for segment in path.split("/")]
    trailing = segments[-1] in ("", ".", "..") and len(segments) > 1
    kept: list[str] = []
    for segment in segments:
        if segment in ("", "."):
            continue
        if segment == "..":
            if not kept:
                return NormalUri(uri, True)
            kept.pop()
            continue
        kept.append(segment)
    normal = ("/" if absolute else "") + "/".join(kept) + ("/" if trailing and kept else "")
    return NormalUri(scheme + authority + normal + rest, False)
