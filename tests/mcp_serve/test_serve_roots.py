"""MCP roots: ``opencode mcp serve`` started without ``--directory`` serves the client's first ``file://``
root and follows ``notifications/roots/list_changed``; each HTTP session its own, chosen only inside the
served directory or a ``--roots-within`` one; other schemes skipped; an explicit directory wins over the
roots."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import pytest
from _serve import HttpServer, Notes, run, stdio_session, text_of
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.types import ListRootsResult, Root

# roots are the handshake revisions' (the newest one drops them): the SDK says so on each use
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


class Roots:
    """A client's roots, changed by the test (the SDK client's ``list_roots_callback``)."""

    def __init__(self, *directories: Path) -> None:
        self.directories: list[Path | str] = list(directories)

    async def callback(self, context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[_root(directory) for directory in self.directories])


def _root(place: Path | str) -> Root:
    """A root: a directory's ``file://`` URI, or any other URI as given (built without the SDK's check,
    which takes only ``file://``, as a client of another SDK may send it)."""
    if isinstance(place, str):
        return Root.model_construct(uri=place, name=None)
    return Root(uri=place.as_uri(), name=place.name)


@pytest.fixture
def places(tmp_path: Path) -> dict[str, Path]:
    made = {}
    for name in ("started", "first", "second"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "where.txt").write_text(f"this is {name}\n")
        made[name] = folder
    (made["second"] / ".opencode" / "tool").mkdir(parents=True)
    (made["second"] / ".opencode" / "tool" / "only_here.py").write_text(
        "from opencode_cli import tool\n\n\n@tool\ndef default() -> str:\n"
        '    """Only in the second root."""\n    return "second\'s own tool"\n'
    )
    return made


def test_the_clients_root_is_served_and_followed(places: dict[str, Path], env: dict[str, str]) -> None:
    roots = Roots(Path("/nonexistent-root"), places["first"])  # the first that is a directory
    notes = Notes()

    async def main() -> tuple[str, str, set[str], str, str]:
        async with stdio_session(
            places["started"], env, list_roots_callback=roots.callback, message_handler=notes.handler
        ) as session:
            first = text_of(await session.call_tool("read", {"filePath": "where.txt"}))
            names_before = {tool.name for tool in (await session.list_tools()).tools}
            assert "only_here" not in names_before
            roots.directories = [places["second"]]
            await session.send_roots_list_changed()
            await asyncio.wait_for(notes.changed.wait(), 30)  # told to list again
            names = {tool.name for tool in (await session.list_tools()).tools}
            second = text_of(await session.call_tool("read", {"filePath": "where.txt"}))
            own = text_of(await session.call_tool("only_here", {}))
            roots.directories = []  # no root: the directory it was started in
            await session.send_roots_list_changed()
            started = text_of(await session.call_tool("read", {"filePath": "where.txt"}))
            return first, second, names, own, started

    first, second, names, own, started = run(main())
    assert "this is first" in first
    assert "this is second" in second and "only_here" in names and own == "second's own tool"
    assert "this is started" in started


def test_an_explicit_directory_wins_over_roots(places: dict[str, Path], env: dict[str, str]) -> None:
    roots = Roots(places["first"])

    async def main() -> str:
        async with stdio_session(
            places["second"], env, "-C", str(places["started"]), list_roots_callback=roots.callback
        ) as session:
            return text_of(await session.call_tool("read", {"filePath": "where.txt"}))

    assert "this is started" in run(main())


def test_each_http_session_has_its_own_root(
    places: dict[str, Path], env: dict[str, str], tmp_path: Path
) -> None:
    served = HttpServer(places["started"], env, "--roots-within", str(tmp_path))  # first, second: beside it
    one, two = Roots(places["first"]), Roots(places["second"])

    async def main() -> list[str]:
        async with (
            served.session(list_roots_callback=one.callback) as first,
            served.session(list_roots_callback=two.callback) as second,
            served.session() as rootless,
        ):
            return [
                text_of(await session.call_tool("read", {"filePath": "where.txt"}))
                for session in (first, second, rootless)
            ]

    try:
        first, second, rootless = run(main())
    finally:
        served.stop()
    assert "this is first" in first and "this is second" in second and "this is started" in rootless


def test_help_says_which_wins() -> None:
    from typer.testing import CliRunner

    from opencode_cli.cli.app import app

    result = CliRunner().invoke(app, ["mcp", "serve", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    assert "--directory" in text and "It wins over the client's MCP roots" in text


# the SDK client's own Root takes file:// only, and warns when it sends another
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
def test_other_schemes_are_skipped_not_the_whole_list(places: dict[str, Path], env: dict[str, str]) -> None:
    roots = Roots("https://example.com/repo", places["first"])

    async def main() -> str:
        async with stdio_session(places["started"], env, list_roots_callback=roots.callback) as session:
            return text_of(await session.call_tool("read", {"filePath": "where.txt"}))

    assert "this is first" in run(main())


@pytest.fixture
def served_tree(tmp_path: Path) -> dict[str, Path]:
    """``proj/`` (served, with ``sub/`` inside and ``link`` → ``out``) and ``out/secret.txt`` beside it."""
    proj, out = tmp_path / "proj", tmp_path / "out"
    (proj / "sub").mkdir(parents=True)
    out.mkdir()
    (proj / "where.txt").write_text("this is proj\n")
    (proj / "sub" / "where.txt").write_text("this is sub\n")
    (out / "secret.txt").write_text("the secret\n")
    (proj / "link").symlink_to(out)
    return {"proj": proj, "sub": proj / "sub", "out": out, "link": proj / "link"}


def test_an_http_clients_root_outside_the_served_directory_is_refused(
    served_tree: dict[str, Path], env: dict[str, str]
) -> None:
    served = HttpServer(served_tree["proj"], env, "--token", "t0k")
    secret = served_tree["out"] / "secret.txt"
    logged: list[tuple[str, Any]] = []

    async def on_log(params: Any) -> None:
        logged.append((params.level, params.data))

    async def main() -> dict[str, list[str]]:
        texts: dict[str, list[str]] = {}
        for name in ("out", "link", "sub"):
            roots = Roots(served_tree[name])
            client = {"list_roots_callback": roots.callback, "logging_callback": on_log}
            async with served.session("t0k", **client) as session:
                texts[name] = [
                    text_of(await session.call_tool("read", {"filePath": path}))
                    for path in ("where.txt", "secret.txt", str(secret))
                ]
        return texts

    try:
        texts = run(main())
    finally:
        served.stop()
    for refused in ("out", "link"):  # served proj instead: the secret is outside it (external_directory)
        where, relative, absolute = texts[refused]
        assert "this is proj" in where
        assert "the secret" not in relative and "the secret" not in absolute
    assert "this is sub" in texts["sub"][0]  # a root inside the served directory is served
    told = [data["message"] for level, data in logged if level == "warning" and data.get("event") == "root"]
    assert len(told) == 2 and all(str(served_tree["out"]) in text for text in told)
    log = served.log.read_text()
    assert log.count("refused") == 2 and "--roots-within" in log


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--roots-within", "."], "--roots-within is for --transport http"),
        (["-t", "http", "--roots-within", "nowhere"], "--roots-within nowhere: not a directory"),
        (["-t", "http", "-C", ".", "--roots-within", "."], "--roots-within is for clients' roots, not -C"),
    ],
)
def test_roots_within_usage_errors(
    args: list[str],
    message: str,
    places: dict[str, Path],
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typer.testing import CliRunner

    from opencode_cli.cli.app import app

    monkeypatch.chdir(places["started"])
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    result = CliRunner().invoke(app, ["mcp", "serve", *args], env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output


URIS = st.one_of(
    st.text(max_size=40),
    st.builds(lambda tail: "file://" + tail, st.text(max_size=40)),
    st.sampled_from(["file:///", "file://localhost/", "file://other/x", "https://example.com/x", "file:"]),
)


@settings(max_examples=200, deadline=None)
@given(uris=st.lists(st.one_of(URIS, st.sampled_from(["INSIDE", "OUTSIDE", "LINK"])), max_size=6))
def test_any_roots_a_client_sends_choose_only_inside_what_was_allowed(uris: list[str]) -> None:
    """Whatever URIs a client lists, the choice is a directory inside the allowed one (or none), every
    refusal is a directory outside it, and nothing raises."""
    from opencode_cli.mcp.serve.roots import ListedRoot, choose

    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder).resolve()
        allowed, outside = base / "served", base / "out"
        (allowed / "inside").mkdir(parents=True)
        outside.mkdir()
        (allowed / "link").symlink_to(outside)
        named = {"INSIDE": allowed / "inside", "OUTSIDE": outside, "LINK": allowed / "link"}
        roots = [ListedRoot(uri=named[uri].as_uri() if uri in named else uri) for uri in uris]
        choice = choose(roots, [allowed])
        if choice.directory is not None:
            assert choice.directory.is_dir() and choice.directory.is_relative_to(allowed)
        assert all(not place.is_relative_to(allowed) and place.is_dir() for place in choice.refused)
        free = choose(roots)  # stdio: any directory, the first one
        assert free.refused == ()
        if all(uri in named for uri in uris):  # only known places: the exact choice
            first = uris.index("INSIDE") if "INSIDE" in uris else len(uris)
            assert choice.directory == (named["INSIDE"] if "INSIDE" in uris else None)
            assert choice.refused == (outside,) * first
