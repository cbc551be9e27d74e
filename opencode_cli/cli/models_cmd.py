"""``opencode models [PROVIDER]``: the providers a project can use and the models each offers, with their
limits, offline: from the ``[provider.NAME]`` tables, the built-in providers and what plugins register
(:mod:`opencode_cli.models.catalog`); no provider is asked."""

from __future__ import annotations

from typing import Any

from .common import fail, friendly_errors, make_project, print_json, write_out


def models(provider: str | None, as_json: bool) -> None:
    """Each provider (or ``provider`` alone) with where it comes from, whether it can be used, and its
    models with their context and output limits; a provider that takes any model id says so, with the
    model families whose limits are known. ``--json``: ``{"providers": [{name, origin, npm, usable,
    error, models: [{id, name, context, input, output, variants}], known: [{prefix, context, output}],
    variants}]}``."""
    from ..models.catalog import load_catalog
    from ..models.known import KNOWN_LIMITS, KNOWN_VARIANTS, variants_of, with_known_limits

    with friendly_errors():
        project = make_project()
        catalog = project.portal.call(load_catalog, project)
        entries = catalog.entries
    if provider is not None:
        entries = [entry for entry in entries if entry.name == provider]
        if not entries:
            import difflib

            close = difflib.get_close_matches(provider, catalog.names(), n=3)
            fail(
                f"error: no provider {provider!r}" + (f" (did you mean {', '.join(close)}?)" if close else "")
            )
    listed: list[dict[str, Any]] = []
    for entry in entries:
        offered = entry.provider.models() if entry.provider is not None else {}
        rows = []
        for model_id, info in sorted(offered.items()):
            limits = with_known_limits(info).limits
            rows.append(
                {
                    "id": model_id,
                    "name": info.name,
                    "context": limits.context,
                    "input": limits.input,
                    "output": limits.output,
                    "variants": list(variants_of(entry.name, info)),
                }
            )
        known = []
        if entry.provider is not None and not offered and entry.origin == "builtin":
            known = [
                {"prefix": prefix, "context": limits.context, "output": limits.output}
                for prefix, limits in sorted(KNOWN_LIMITS.items())
                if _family(prefix) == entry.name
            ]
        listed.append(
            {
                "name": entry.name,
                "origin": entry.origin,
                "npm": entry.npm,
                "usable": entry.supported,
                "error": None if entry.error is None else str(entry.error),
                "models": rows,
                "known": known,
                "variants": list(KNOWN_VARIANTS.get(entry.name, {})),
            }
        )
    if as_json:
        print_json({"providers": listed})
        return
    for number, item in enumerate(listed):
        if number:
            write_out("\n")
        status = "" if item["usable"] else f"  cannot be used: {item['error']}"
        write_out(f"{item['name']}  ({item['origin']}{', ' + item['npm'] if item['npm'] else ''}){status}")
        for row in item["models"]:
            write_out(f"  {item['name']}/{row['id']}  {_limits(row)}")
        if not item["models"] and item["usable"]:
            variants = f" (variants: {', '.join(item['variants'])})" if item["variants"] else ""
            write_out(f"  any model id{variants}")
            for row in item["known"]:
                write_out(f"  {item['name']}/{row['prefix']}…  {_limits(row)}")


#: Which built-in provider serves the model families of the known limits.
FAMILIES = {"claude": "anthropic", "gemini": "google"}


def _family(prefix: str) -> str:
    return FAMILIES.get(prefix.split("-", 1)[0], "")


def _limits(row: dict[str, Any]) -> str:
    def count(value: int | None) -> str:
        return "?" if value is None else f"{value:,}".replace(",", " ")

    text = f"context {count(row['context'])}, output {count(row['output'])}"
    text += f", input {count(row['input'])}" if row.get("input") else ""
    return text + (f"  variants: {', '.join(row['variants'])}" if row.get("variants") else "")
