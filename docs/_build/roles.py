"""Sphinx cross-references in docstrings, as the documentation site shows them.

A griffe extension of the site's mkdocstrings handler (mkdocs.yml, ``options: extensions``): before a
docstring is rendered, each role such as ``:func:`tool_execute``` or
``:class:`~opencode_cli.plugins.Plugins``` becomes a cross-reference for mkdocs-autorefs. A target the site documents (a hook of ``hookspecs.py``)
is a link to it; any other is shown as code, its full name as the title. A name without a dot is looked up
among the members of the docstring's own module first. A paragraph ending in reStructuredText's ``::``
(a literal block follows) ends in ``:``, as the block is shown as code anyway.

The docstrings themselves are left as they are: Sphinx and IDEs read them as written.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import griffe

#: A Sphinx role of the Python domain: ``:func:`name```, ``:py:class:`~package.Name```.
ROLE = re.compile(r":(?:py:)?(?:class|func|data|mod|meth|attr|exc|obj|const):`(~?)([\w.]+)(?:\(\))?`")
#: reStructuredText's literal-block marker at the end of a paragraph's last line.
LITERAL = re.compile(r"(?<=\S)::$", re.MULTILINE)


def markdown_roles(text: str, resolve: Callable[[str], str] = lambda name: name) -> str:
    """``text`` with every Sphinx role made an optional autorefs cross-reference (a link where the target
    is documented, code where it is not) and every ``::`` literal-block marker made ``:``. ``resolve``
    turns a role's target into the full dotted name the reference is looked up by."""

    def reference(match: re.Match[str]) -> str:
        short, target = match.group(1), match.group(2)
        shown = target.rsplit(".", 1)[-1] if short else target
        identifier = html.escape(resolve(target), quote=True)
        return f'<autoref identifier="{identifier}" optional><code>{html.escape(shown)}</code></autoref>'

    return LITERAL.sub(":", ROLE.sub(reference, text))


def resolver(obj: griffe.Object) -> Callable[[str], str]:
    """How the roles of ``obj``'s docstring name their targets: a bare name that is a member of
    ``obj``'s module means that member; anything else is taken as written."""
    module = obj.module

    def resolve(name: str) -> str:
        if "." not in name and name in module.members:
            return f"{module.path}.{name}"
        return name

    return resolve


class SphinxRoles(griffe.Extension):
    """Rewrite the roles of every docstring griffe loads for the site (see the module's docstring)."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_roles(obj.docstring.value, resolver(obj))
