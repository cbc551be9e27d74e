"""Resource URIs are judged after normalising (issue 28, item 7): unit properties, then a real server."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from _mcp_servers import SERVERS
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli import ToolError
from opencode_cli.mcp.uris import normalize_uri
from opencode_cli.permission import Rule
from opencode_cli.project import Project
from opencode_cli.session import Decision

ProjectFactory = Callable[..., Project]


@pytest.mark.parametrize(
    ("uri", "normal"),
    [
        ("file:///project/a.txt", "file:///project/a.txt"),
        ("file:///project/../out/secret.txt", "file:///out/secret.txt"),
        ("file:///project/%2e%2e/out/secret.txt", "file:///out/secret.txt"),
        ("file:///project/%2E./out/%2e/x", "file:///out/x"),
        ("file:///project//./a.txt", "file:///project/a.txt"),
        ("demo://notes/a/../b?x=../y#z", "demo://notes/b?x=../y#z"),
        ("file:///project/%2fetc", "file:///project/%2fetc"),  # only dot segments are decoded
        ("urn:isbn:0451450523", "urn:isbn:0451450523"),
        ("demo://readme", "demo://readme"),
    ],
)
def test_normalised(uri: str, normal: str) -> None:
    assert normalize_uri(uri) == (normal, False)


@pytest.mark.parametrize("uri", ["file:///../etc/passwd", "file:///project/../../etc", "x:%2e%2e/y"])
def test_climbing_above_the_root_is_kept_as_written(uri: str) -> None:
    assert normalize_uri(uri) == (uri, True)


segment = st.sampled_from([".", "..", "%2e", "%2E%2e", "", "a", "b", "c.d", "%41"])
uris = st.builds(
    lambda scheme, authority, parts: f"{scheme}:{authority}/{'/'.join(parts)}",
    st.sampled_from(["file", "demo", "x-y"]),
    st.sampled_from(["//", "//host"]),
    st.lists(segment, max_size=8),
)


@given(uris)
def test_normalising_is_idempotent_and_leaves_no_dot_or_empty_segment(uri: str) -> None:
    normal, climbs = normalize_uri(uri)
    assert normalize_uri(normal) == (normal, climbs)
    if not climbs:
        path = normal.split(":", 1)[1].removeprefix("//host").removeprefix("//")
        inner = path.strip("/").split("/") if path.strip("/") else []
        assert not set(inner) & {".", "..", "", "%2e", "%2E%2e"}


# -- a real server --------------------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "project").mkdir(parents=True)
    (root / "out").mkdir()
    (root / "project" / "a.txt").write_text("inside")
    (root / "out" / "secret.txt").write_text("TOP SECRET")
    return root


@pytest.mark.parametrize(
    "uri",
    [
        "file:///project/../out/secret.txt",
        "file:///project/%2e%2e/out/secret.txt",
        "file:///project/../../out/secret.txt",
    ],
)
def test_a_prefix_rule_never_reads_outside_its_prefix(
    make_project: ProjectFactory, project_dir: Path, files: Path, uri: str
) -> None:
    command = [sys.executable, str(SERVERS / "rtsrv_server.py"), str(files)]
    (project_dir / "opencode.toml").write_text(
        tomli_w.dumps({"mcp": {"rtsrv": {"type": "local", "command": command}}})
    )
    project = make_project()
    asked: list[Any] = []

    async def refuse(request: Any) -> Decision:
        asked.append(request.patterns)
        return Decision("reject")

    rules = [Rule("read", "*", "ask", "test"), Rule("read", "mcp:rtsrv:file:///project/*", "allow", "test")]

    async def main() -> tuple[str, str | None]:
        async with project:
            await project.open()
            async with project.session(prompt=refuse, rules=rules) as session:
                inside = await session.execute(
                    "read_mcp_resource", {"server": "rtsrv", "uri": "file:///project/a.txt"}
                )
                try:
                    outside = await session.execute("read_mcp_resource", {"server": "rtsrv", "uri": uri})
                except ToolError:
                    return inside.output, None
                return inside.output, outside.output

    inside, outside = asyncio.run(asyncio.wait_for(main(), 90))
    assert inside.endswith("\ninside")
    assert outside is None  # on main: "TOP SECRET"
    assert len(asked) == 1  # the outside read was put to the user, who refused
    assert asked[0][0] in ("mcp:rtsrv:file:///out/secret.txt", f"mcp:rtsrv:{uri}")
