"""``[lsp.NAME]`` and the built-in table: parsing, errors, which server is used, where its root is."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from opencode_cli.errors import ConfigError
from opencode_cli.lsp.config import BUILTINS, ServerSpec, root_for, servers
from opencode_cli.lsp.servers import available


def by_name(config: dict) -> dict[str, ServerSpec]:
    found, _ = servers(config)
    return {spec.name: spec for spec in found}


def program(directory: Path, name: str) -> Path:
    """A real executable file named ``name`` in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_builtins_cover_the_common_languages() -> None:
    table = {spec.name: spec for spec in BUILTINS}
    assert [s.name for s in BUILTINS if s.group == "python"] == [
        "basedpyright", "pyright", "ty", "pylsp", "jedi-language-server"
    ]  # fmt: skip
    assert table["ty"].command == ("ty", "server")
    assert table["typescript"].handles("a/b.tsx") and table["gopls"].handles("x.go")
    assert table["rust-analyzer"].handles("lib.rs") and not table["gopls"].handles("x.rs")
    assert all(spec.builtin and not spec.explicit for spec in BUILTINS)


def test_lsp_false_is_no_server_and_no_table_is_the_builtins() -> None:
    assert servers({"lsp": False}) == ([], [])
    assert [s.name for s in servers({})[0]] == [s.name for s in BUILTINS]


def test_a_custom_server_and_a_changed_builtin() -> None:
    specs = by_name(
        {
            "lsp": {
                "mylang": {
                    "command": ["mylang-ls", "--stdio"],
                    "extensions": [".my"],
                    "env": {"A": "1"},
                    "initialization": {"strict": True},
                },
                "pyright": {"disabled": True},
                "gopls": {"command": ["/opt/gopls", "serve"]},
            }
        }
    )
    custom = specs["mylang"]
    assert (custom.command, custom.extensions, custom.env) == (
        ("mylang-ls", "--stdio"),
        (".my",),
        (("A", "1"),),
    )
    assert custom.initialization == {"strict": True} and custom.explicit and not custom.builtin
    assert specs["pyright"].disabled and specs["pyright"].builtin
    assert specs["gopls"].command == ("/opt/gopls", "serve") and specs["gopls"].group is None
    assert list(specs)[-1] == "mylang"  # built-ins first


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"lsp": "no"}, "lsp must be false or a table"),
        ({"lsp": {"x": 1}}, "lsp.x must be a table"),
        ({"lsp": {"x": {"extensions": [".x"]}}}, "lsp.x.command is required"),
        ({"lsp": {"x": {"command": ["x"]}}}, "lsp.x.extensions is required"),
        ({"lsp": {"x": {"command": "x-ls", "extensions": [".x"]}}}, "lsp.x.command must be a non-empty list"),
        ({"lsp": {"x": {"command": ["x"], "extensions": ".x"}}}, "lsp.x.extensions must be a list"),
        ({"lsp": {"ty": {"disabled": "yes"}}}, "lsp.ty.disabled must be true or false"),
        ({"lsp": {"ty": {"env": {"A": 1}}}}, "lsp.ty.env must be a table of strings"),
        ({"lsp": {"ty": {"initialization": [1]}}}, "lsp.ty.initialization must be a table"),
    ],
)
def test_wrong_shapes_are_config_errors_naming_the_key(table: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        servers(table)


def test_unknown_keys_are_warned_with_a_hint() -> None:
    _, warnings = servers({"lsp": {"ty": {"disable": True}}})
    assert warnings == [
        "unknown config key 'lsp.ty.disable' (did you mean 'lsp.ty.disabled'?); it is ignored"
    ]


def test_the_first_builtin_found_of_a_group_is_used(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    program(bin_dir, "pylsp")
    program(bin_dir, "jedi-language-server")
    env = {"PATH": str(bin_dir)}
    specs = [s for s in BUILTINS if s.name in ("pylsp", "jedi-language-server")]  # in the table's order
    chosen = [(spec.name, argv) for spec, argv in available(specs, env) if argv is not None]
    assert chosen == [("pylsp", [str(bin_dir / "pylsp")])]
    disabled = [ServerSpec(**{**s.__dict__, "disabled": s.name == "pylsp"}) for s in specs]
    chosen = [spec.name for spec, argv in available(disabled, env) if argv is not None]
    assert chosen == ["jedi-language-server"]


def test_a_configured_command_not_found_is_kept_to_fail_clearly() -> None:
    [spec] = [
        s
        for s in servers({"lsp": {"x": {"command": ["no-such-x-ls"], "extensions": [".x"]}}})[0]
        if s.name == "x"
    ]
    assert available([spec], {"PATH": os.defpath}) == [(spec, ["no-such-x-ls"])]


def test_the_root_is_the_nearest_marker_up_to_the_project(tmp_path: Path) -> None:
    top = tmp_path / "repo"
    inner = top / "services" / "api"
    (inner / "src").mkdir(parents=True)
    (inner / "pyproject.toml").write_text("")
    (top / "pyproject.toml").write_text("")
    ty = next(s for s in BUILTINS if s.name == "ty")
    assert root_for(ty, inner / "src" / "app.py", top) == inner
    assert root_for(ty, top / "tool.py", top) == top
    assert root_for(ty, tmp_path / "elsewhere.py", top) == top
    gopls = next(s for s in BUILTINS if s.name == "gopls")
    assert root_for(gopls, inner / "src" / "main.go", top) == top  # no go.mod anywhere
