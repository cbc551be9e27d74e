"""The parts of trust that are parsers and judgements: directory patterns (hypothesis), what an untrusted
project's rules keep, and the record's cheap check."""

from __future__ import annotations

import os
import string
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.config import Config
from opencode_cli.errors import ConfigError
from opencode_cli.trust import audit, changes, covers, user_patterns

HOME = Path("/home/someone")
segment = st.text(alphabet=string.ascii_letters + string.digits + "._-", min_size=1, max_size=8).filter(
    lambda text: text not in (".", "..")
)
segments = st.lists(segment, min_size=1, max_size=5)


@given(segments)
def test_a_directory_named_exactly_is_covered_and_so_is_what_is_under_it(parts: list[str]) -> None:
    directory = Path("/", *parts)
    assert covers(str(directory), directory, HOME)
    assert covers(str(directory), directory / "sub" / "deeper", HOME)


@given(segments, segment)
def test_a_star_matches_one_segment_never_a_slash(parts: list[str], extra: str) -> None:
    base = Path("/", *parts)
    assert covers(f"{base}/*", base / extra, HOME)
    assert not covers(f"{base}/*", base, HOME)  # the folder itself is not one of its children
    assert not covers(f"{base}*/x", Path(f"{base}") / "y" / "x", HOME)


@given(segments, segments)
def test_a_double_star_matches_any_depth_and_other_trees_never(parts: list[str], below: list[str]) -> None:
    base = Path("/", *parts)
    assert covers(f"{base}/**", base.joinpath(*below), HOME)
    assert not covers(f"{base}/**", Path("/", "other" + parts[0], *parts[1:], *below), HOME)


@given(segments)
def test_home_is_expanded_and_relative_patterns_cover_nothing(parts: list[str]) -> None:
    assert covers("~/" + "/".join(parts), HOME.joinpath(*parts), HOME)
    assert not covers("/".join(parts), Path("/", *parts), HOME)
    assert not covers("", Path("/", *parts), HOME)


@given(st.text(max_size=40))
def test_any_pattern_text_is_judged_without_an_error(pattern: str) -> None:
    covers(pattern, Path("/a/b"), HOME)


def test_the_users_patterns_must_be_a_list_of_strings() -> None:
    assert user_patterns(Config({"trust": {"directories": ["~/src/*"]}})) == ["~/src/*"]
    with pytest.raises(ConfigError, match=r"trust\.directories must be a list of directory patterns"):
        user_patterns(Config({"trust": {"directories": "~/src/*"}}))


def test_only_deny_rules_and_false_switches_of_a_project_are_kept() -> None:
    kept, items = audit(
        {
            "permission": {
                "bash": {"*": "ask", "rm *": "deny", "git *": "allow"},
                "webfetch": "deny",
                "edit": "allow",
            },
            "tools": {"bash": False, "webfetch": True},
            "agent": {"x": {"permission": "allow", "prompt": "hi", "disable": False}},
            "plugins": {"disabled": ["web"]},
        },
        Path("/p/opencode.toml"),
        {},
    )
    assert kept == {
        "permission": {"bash": {"rm *": "deny"}, "webfetch": "deny"},
        "tools": {"bash": False},
        "agent": {"x": {"prompt": "hi"}},
        "plugins": {"disabled": ["web"]},
    }
    assert sorted(item.key for item in items) == [
        "agent.x.disable",
        "agent.x.permission.*",
        "permission.bash",
        "permission.bash",
        "permission.edit",
        "tools.webfetch",
    ]
    assert {item.kind for item in items} == {"widen"}


@pytest.mark.parametrize(
    ("project", "user", "kept"),
    [
        ({"mode": "read-only"}, {"mode": "workspace-write"}, {"mode": "read-only"}),
        ({"mode": "workspace-write"}, {"mode": "read-only"}, None),
        ({"mode": "workspace-write"}, {}, {"mode": "workspace-write"}),
        ({"network": True}, {}, None),
        (
            {"network": False, "read": "project", "required": True},
            {},
            {"network": False, "read": "project", "required": True},
        ),
        ({"read": "all"}, {"read": "project"}, None),
        ({"writable": ["/"]}, {}, None),
    ],
)
def test_a_sandbox_key_is_kept_only_when_at_least_as_strict_as_the_users(
    project: dict[str, object], user: dict[str, object], kept: dict[str, object] | None
) -> None:
    result, items = audit({"sandbox": project}, Path("/p/opencode.toml"), {"sandbox": user})
    assert result.get("sandbox") == kept
    assert bool(items) == (kept is None)


def test_turning_off_a_users_mcp_server_or_language_server_is_kept() -> None:
    kept, items = audit(
        {
            "mcp": {"mine": {"enabled": False}, "theirs": {"enabled": False}},
            "lsp": {"pyright": {"disabled": True}},
        },
        Path("/p/opencode.toml"),
        {"mcp": {"mine": {"type": "local", "command": ["x"]}}},
    )
    assert kept == {"mcp": {"mine": {"enabled": False}}, "lsp": {"pyright": {"disabled": True}}}
    assert items == []


def test_a_file_whose_size_and_time_are_as_recorded_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "tool.py"
    path.write_text("x = 1\n")
    status = path.stat()
    stamp = [status.st_size, status.st_mtime_ns, None]
    recorded = {str(path): [status.st_size, status.st_mtime_ns, "not the digest of anything"]}
    assert changes(recorded, {str(path): stamp}, tmp_path) == []  # not hashed: the stamp decides
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1000))
    moved = [status.st_size, status.st_mtime_ns + 1000, None]
    assert changes(recorded, {str(path): moved}, tmp_path) == ["tool.py changed"]
    assert changes({}, {str(path): moved}, tmp_path) == ["tool.py is new"]
    assert changes(recorded, {}, tmp_path) == ["tool.py is gone"]
