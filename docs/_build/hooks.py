"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks``).

* ``docs/cli.md``'s ``<!-- cli-reference -->`` becomes the reference of every ``opencode`` command, made
  from the Typer application itself: each command's usage, description and options exactly as ``--help``
  prints them, so the page cannot fall behind the code.
* A link from a page to a file of the repository outside ``docs/`` (``[plugins/](../plugins)``, which
  GitHub follows) is not a page of the site: it becomes its text. A link whose file does not exist is a
  warning, so ``mkdocs build --strict`` fails on it.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.plugins.opencode")

MARKER = "<!-- cli-reference -->"
#: The width the help texts are wrapped at on the page.
WIDTH = 100
_OUTSIDE = re.compile(r"\[([^\]]+)\]\((\.\./[^)\s#]+)(#[^)]*)?\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fill the CLI reference, and turn links to repository files outside the site into their text."""
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, cli_reference())
    docs = Path(config["docs_dir"])
    source = docs / page.file.src_path

    def outside(match: re.Match[str]) -> str:
        target = (source.parent / match.group(2)).resolve()
        if not target.exists():
            log.warning("%s links to %s, which does not exist", page.file.src_path, match.group(2))
        return match.group(1)

    return _OUTSIDE.sub(outside, markdown)


def cli_reference() -> str:
    """Markdown for every command of the ``opencode`` application: a heading, then its ``--help``."""
    import typer

    from opencode_cli.cli.app import app

    root = typer.main.get_command(app)
    sections: list[str] = []

    def walk(command: Any, name: str, parent: Any) -> None:
        context = command.context_class(  # click's, or the copy some typer versions carry
            command,
            info_name=name,
            parent=parent,
            terminal_width=WIDTH,
            max_content_width=WIDTH,
            help_option_names=["-h", "--help"],
        )
        path = context.command_path
        level = "#" * min(2 + path.count(" "), 4)
        sections.append(f"{level} `{path}`\n\n```text\n{command.get_help(context).rstrip()}\n```\n")
        if hasattr(command, "list_commands"):  # a group
            for sub_name in command.list_commands(context):
                sub = command.get_command(context, sub_name)
                if sub is not None and not sub.hidden:
                    walk(sub, sub_name, context)

    walk(root, "opencode", None)
    return "\n".join(sections)
