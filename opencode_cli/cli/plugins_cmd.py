"""``opencode plugins list``."""

from __future__ import annotations

from .common import friendly_errors, make_project, print_json, with_mcp


def list_plugins(as_json: bool) -> None:
    """Print every plugin and tool file with its version, source, hooks, tools and status."""
    with friendly_errors():
        project = make_project()
        records = with_mcp(project, lambda: project.generation.plugin_records())
    from .. import sandbox
    from ..builtin import unconfined

    outside = unconfined(records) if sandbox.settings(project.config.data, project.env).on else {}
    if as_json:
        print_json({"plugins": [record.as_dict() for record in records]})
        return
    for record in records:
        name = record.name if record.kind != "file" else (record.location or record.name)
        if record.kind == "mcp":
            name = f"{record.name} ({record.location})"
        version = f" {record.version}" if record.version else ""
        hooks = ", ".join(record.hooks) or "-"
        tools = ", ".join(record.tools) or "-"
        print(f"{name}{version}  [{record.kind}]  {record.status}")
        if record.kind not in ("file", "mcp"):
            print(f"    hooks: {hooks}")
        print(f"    tools: {tools}")
        if record.name in outside:
            print("    runs in this process: the sandbox does not confine these tools")
        if record.error:
            print(f"    {'reason' if record.status == 'not trusted' else 'error'}: {record.error}")
        for warning in record.warnings:
            print(f"    warning: {warning}")
