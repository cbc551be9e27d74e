"""The built-ins' recorded schemas (issue 19, item 3): listed and sent without importing a tool module,
always equal to the live ones, and never used once the source they came from has changed."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest

from opencode_cli import Project
from opencode_cli.tools import _record, _schemas


@pytest.mark.parametrize("tool_id", _schemas.RECORDED)
def test_the_recorded_schema_is_the_live_one(tool_id: str) -> None:
    table = json.loads(_schemas.FILE.read_text(encoding="utf-8"))
    assert tool_id in table, "run: python -m opencode_cli.tools._record"
    assert table[tool_id]["source"] == _schemas.source_digest(tool_id), (
        f"{tool_id}.py (or schema.py) changed since schemas.json was written: "
        "python -m opencode_cli.tools._record"
    )
    assert table[tool_id]["schema"] == _record.live_schema(tool_id)
    assert table[tool_id]["plain"] == _record.live_facts(tool_id)


def test_every_builtin_is_recorded(make_project: Callable[..., Project]) -> None:
    registered = [
        entry.id for entry in make_project().registry.entries.values() if entry.tool.source.kind == "builtin"
    ]
    assert sorted(set(registered) - set(_schemas.RECORDED)) == []


def test_a_changed_source_is_read_live(monkeypatch: pytest.MonkeyPatch) -> None:
    _schemas._fresh.clear()
    monkeypatch.setattr(_schemas, "source_digest", lambda tool_id: "edited since")
    assert _schemas.recorded("read")() is None  # not trusted: define() falls back to building the tool
    assert _schemas.plain("read")() is None  # nor the facts: every call goes to the model
    _schemas._fresh.clear()
    monkeypatch.undo()
    assert _schemas.recorded("read")() == _record.live_schema("read")
    _schemas._fresh.clear()


def test_schema_and_inspect_import_no_tool_module(cli_env: dict[str, str]) -> None:
    probe = (
        "import sys\n"
        "from opencode_cli.cli.app import app\n"
        "try:\n    app(['tools', 'schema', '--model', 'gpt-5'], standalone_mode=False)\n"
        "finally:\n    print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    env = {k: v for k, v in cli_env.items() if k != "project"}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=cli_env["project"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert '"name": "read"' in done.stdout
    modules = next(line for line in done.stderr.splitlines() if line.startswith("MODULES ")).split()[1:]
    loaded = [
        name
        for name in modules
        if name.startswith("opencode_cli.tools.") and not name.split(".")[-1].startswith("_")
    ]
    assert loaded == []


def test_recorded_schemas_keep_the_key_order() -> None:
    """Property order is part of what the model is shown: the file keeps it."""
    table = json.loads(_schemas.FILE.read_text(encoding="utf-8"))
    for tool_id in _schemas.RECORDED:
        assert json.dumps(table[tool_id]["schema"]) == json.dumps(_record.live_schema(tool_id))
