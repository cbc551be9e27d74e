"""``opencode sandbox check``: what the kernel supports, the effective lists, and a command's fate."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .common import friendly_errors, make_project, print_json


def report(project: Any, command: str | None, agent_name: str | None) -> dict[str, Any]:
    """The check as data (what ``--json`` prints)."""
    from .. import sandbox
    from ..builtin import unconfined
    from ..tools import _sandbox, _shell_scan

    settings = sandbox.settings(project.config.data, project.env)
    support = sandbox.support(project.env)
    plan = sandbox.build(
        settings,
        directory=project.directory,
        worktree=project.worktree,
        env=project.env,
        spill=project.generation.truncator.directory,
    )
    problem = support.shortfall(settings)
    if not settings.on:
        status = "off"
    elif problem is None:
        status = "enforced"
    elif settings.required:
        status = "refused"
    else:
        status = "degraded" if support.available else "not enforced"
    data: dict[str, Any] = {
        "landlock": {"abi": support.abi, "network": support.network, "reason": support.reason or None},
        "mode": settings.mode,
        "network": settings.network,
        "read": settings.read,
        "required": settings.required,
        "status": status,
        "problem": problem,
        "writable": plan.write if settings.on else [],
        "readable": (plan.read or ["/"]) if settings.on else [],
        "missing": plan.missing,
        "private": _private(plan) if settings.on else {"walled": [], "read_only": []},
        "config": {
            "protected": plan.protected if settings.on and support.mounts else [],
            "unprotected": [*plan.unprotected, *([] if support.mounts else plan.protected)]
            if settings.on
            else [],
            "binds": support.mounts,
            "reason": support.mounts_reason or None,
        },
        "unconfined": unconfined(project.generation.plugin_records()) if settings.on else {},
    }
    if command is not None:
        scan = _shell_scan.scan(
            command, cwd=str(project.directory), directory=project.directory, worktree=project.worktree,
            env=project.env,
        )  # fmt: skip
        from ..permission import evaluate

        patterns = scan.patterns or [command]
        rules = project.generation.agent(agent_name).permission
        decision = _sandbox.decide(patterns, rules)
        sandboxed = settings.on and decision != "allow" and status in ("enforced", "degraded")
        # bash asks external_directory first, for every directory outside the project the command names
        outside = [evaluate("external_directory", glob, rules).action for glob in scan.dir_patterns]
        data["command"] = {
            "command": command,
            "patterns": patterns,
            "sandbox": decision,
            "sandboxed": sandboxed,
            "outside": list(scan.dirs),
            "external_directory": _strictest(outside),
        }
    return data


def _private(plan: Any) -> dict[str, list[str]]:
    """The user's places kept from commands whatever the lists say, those that exist now: walled off
    (``walled``), or read-only (``read_only``)."""
    import os

    places = plan.private.places
    present = [path for path in places if os.path.lexists(path)]
    return {
        "walled": [path for path in present if places[path] is None],
        "read_only": [path for path in present if places[path] == "r"],
    }


def _strictest(actions: Sequence[str]) -> str | None:
    """The action that decides several patterns: any ``deny``, else any ``ask``, else ``allow``."""
    for action in ("deny", "ask", "allow"):
        if action in actions:
            return action
    return None


def check(command: str | None, agent_name: str | None, as_json: bool) -> None:
    """Print :func:`report` for the current project."""
    with friendly_errors():
        data = report(make_project(), command, agent_name)
    if as_json:
        print_json(data)
        return
    landlock = data["landlock"]
    if landlock["abi"]:
        rules = "yes" if landlock["network"] else "no (ABI 4 is needed)"
        print(f"landlock: ABI {landlock['abi']}; network rules: {rules}")
    else:
        print(f"landlock: unavailable: {landlock['reason']}")
    network = "allowed" if data["network"] or data["mode"] == "off" else "blocked"  # off confines nothing
    required = str(data["required"]).lower()
    print(f"mode: {data['mode']}; network: {network}; read: {data['read']}; required: {required}")
    status = data["status"]
    print(f"status: {status}" + (f" ({data['problem']})" if data["problem"] and status != "off" else ""))
    if data["mode"] != "off":
        print("writable:")
        for path in data["writable"]:
            print(f"  {path}")
        print("readable:" + (" everything but the private places" if data["readable"] == ["/"] else ""))
        if data["readable"] != ["/"]:
            for path in data["readable"]:
                print(f"  {path}")
        private = data["private"]
        for title, key in (("never read or written", "walled"), ("never written", "read_only")):
            if private[key]:
                print(f"private, {title} (that exist now):")
                for path in private[key]:
                    print(f"  {path}")
    for path in data["missing"]:
        print(f"missing (grants nothing): {path}")
    if data["mode"] != "off":
        _print_config(data["config"])
    for plugin, tools in data["unconfined"].items():
        print(f"not confined (plugin {plugin} runs them in this process): {', '.join(tools)}")
    found = data.get("command")
    if found is not None:
        if found["sandboxed"]:
            fate = "runs in the sandbox"
        elif data["mode"] == "off":
            fate = "runs unsandboxed (mode off)"
        elif status == "refused":
            fate = "is refused (the sandbox is required and cannot be enforced)"
        elif status == "not enforced":
            fate = "runs unsandboxed (Landlock unavailable), with a warning"
        else:
            fate = "runs unsandboxed (the sandbox permission allows it)"
        if found["sandbox"] == "ask" and found["sandboxed"]:
            fate += "; an approved `sandbox` ask would let it out"
        outside = ", ".join(found["outside"])
        if found["external_directory"] == "deny":
            fate = f"is refused: it names {outside}, outside the project, and external_directory denies it"
        elif found["external_directory"] == "ask":
            fate = f"asks external_directory first ({outside} is outside the project), then {fate}"
        print(f"command: {fate}")


def _print_config(config: dict[str, Any]) -> None:
    """What commands are kept from of the project's configuration and trusted code."""
    if config["binds"]:
        print("configuration read-only to commands (bound in a private mount namespace):")
        for path in config["protected"]:
            print(f"  {path}")
    else:
        print(f"configuration: not protected from commands ({config['reason']})")
    if config["unprotected"]:
        print("configuration a command could still create or write:")
        for path in config["unprotected"]:
            print(f"  {path}")
