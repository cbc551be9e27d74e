"""The bash tool's permission scan (:mod:`opencode_cli.tools._shell_scan`) and arity table (§2.3).

These call the scan directly: no process is started.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from opencode_cli.errors import ToolError
from opencode_cli.tools import _arity, _shell_scan


@pytest.fixture
def root(project_dir: Path) -> Path:
    """The project directory (no :class:`Project` is built: the scan needs only paths), with ``sub/``."""
    (project_dir / "sub").mkdir()
    return project_dir


@pytest.fixture
def outer(outer: Path) -> Path:
    """The shared directory outside the project, with ``data/`` in it."""
    (outer / "data").mkdir()
    return outer


def scan(command: str, root: Path, home: Path, cwd: Path | None = None, **env: str) -> _shell_scan.Scan:
    return _shell_scan.scan(
        command, cwd=str(cwd or root), directory=root, worktree=root, env={"HOME": str(home), **env}
    )


# -- arity -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls -la", "ls *"),
        ("git log --oneline -5", "git log *"),
        ("git checkout main", "git checkout *"),
        ("git stash pop", "git stash pop *"),
        ("npm run dev", "npm run dev *"),
        ("npm install", "npm install *"),
        ("docker compose up -d", "docker compose up *"),
        ("aws s3 ls", "aws s3 ls *"),
        ("gh pr list", "gh pr list *"),
        ("python -m venv env", "python -m *"),
        ("python3 script.py", "python3 *"),
        ("touch a b", "touch *"),
        ("terraform workspace select prod", "terraform workspace select *"),
        ("cargo run main", "cargo run main *"),
        ("kubectl get pods", "kubectl get *"),
        ("redis-cli ping", "redis-cli ping *"),
        ("make", "make *"),
    ],
)
def test_arity_prefix(command: str, expected: str) -> None:
    assert _arity.always_pattern(command.split()) == expected


def test_arity_table_matches_the_spec() -> None:
    table = _arity.ARITY
    one = "cat cd chmod chown cp echo env export grep kill killall ln ls mkdir mv ps pwd rm rmdir sleep "
    one += "source tail touch unset which"
    assert {k for k, v in table.items() if v == 1} == set(one.split())
    three = "aws az doctl gcloud gh sfdx"
    assert {k for k, v in table.items() if v == 3 and " " not in k} == set(three.split())
    assert len([k for k in table if " " in k]) == 41
    assert all(table[k.split()[0]] == 2 for k in table if " " in k)
    assert _arity.prefix([]) == []


# -- patterns ----------------------------------------------------------------------------------------------


def test_every_simple_command_is_a_pattern(root: Path, home: Path) -> None:
    command = "a 1 | b 2 && (c 3; d $(e 4)) || f `g 5` <(h 6) >(i 7); j() { k 8; }"
    found = scan(command, root, home)
    assert found.patterns == [
        "a 1",
        "b 2",
        "c 3",
        "d $(e 4)",
        "e 4",
        "f `g 5` <(h 6) >(i 7)",
        "g 5",
        "h 6",
        "i 7",
        "k 8",
    ]
    assert found.dirs == []


def test_commands_in_compound_statements(root: Path, home: Path) -> None:
    command = "if a; then b; elif c; then d; else e; fi; while f; do g; done; "
    command += "case x in y) h;; esac; for i in 1; do j; done"
    assert scan(command, root, home).patterns == list("abcdefghj")


def test_here_document_body_substitutions(root: Path, home: Path) -> None:
    found = scan("cat <<EOF\n$(whoami) and `date`\nEOF", root, home)
    assert found.patterns == ["cat <<EOF\n$(whoami) and `date`\nEOF", "whoami", "date"]
    quoted = scan("cat <<'EOF'\n$(whoami)\nEOF", root, home)
    assert quoted.patterns == ["cat <<'EOF'\n$(whoami)\nEOF"]
    # tree-sitter-bash leaves backquotes of here-documents as text: the scan finds them itself
    found = scan("cat <<-EOF\n\t`rm /etc/x` \\`not\\` $(pwd)\n\tEOF", root, home)
    assert found.patterns[1:] == ["pwd", "rm /etc/x"] and found.dirs == ["/etc"]
    assert scan("cat <<\\EOF\n`rm /etc/x`\nEOF", root, home).dirs == []


def test_patterns_and_always_have_no_duplicates(root: Path, home: Path) -> None:
    found = scan("echo a; echo a; echo b", root, home)
    assert found.patterns == ["echo a", "echo b"]
    assert found.always == ["echo *"]


def test_redirected_command_pattern_is_the_whole_statement(root: Path, home: Path) -> None:
    found = scan("echo test > output.txt 2>&1", root, home)
    assert found.patterns == ["echo test > output.txt 2>&1"]
    assert found.always == ["echo *"]


def test_statement_without_a_command_is_a_pattern(root: Path, home: Path) -> None:
    found = scan("> out.txt", root, home)
    assert found.patterns == ["> out.txt"] and found.always == ["> out.txt"]
    grouped = scan("{ echo a; } > out.txt", root, home)
    assert grouped.patterns == ["echo a"]


def test_cd_only_asks_nothing(root: Path, home: Path) -> None:
    assert scan("cd .", root, home) == _shell_scan.Scan()
    assert scan("cd sub && cd ..", root, home) == _shell_scan.Scan()


def test_assignments_alone_ask_nothing(root: Path, home: Path) -> None:
    assert scan("X=1", root, home).patterns == []


def test_wrapped_commands_are_patterns_too(root: Path, home: Path) -> None:
    found = scan("sudo -u root rm -rf x; timeout 5 make test; command -v git", root, home)
    assert found.patterns == [
        "sudo -u root rm -rf x",
        "rm -rf x",
        "timeout 5 make test",
        "make test",
        "command -v git",
    ]
    assert found.always == ["sudo *", "rm *", "timeout *", "make test *", "command *"]


def test_scripts_of_shells_and_eval_are_scanned(root: Path, home: Path) -> None:
    found = scan("bash -c 'git status && ls' ; eval \"echo hi\"", root, home)
    assert found.patterns == ["bash -c 'git status && ls'", "git status", "ls", 'eval "echo hi"', "echo hi"]


# -- paths -----------------------------------------------------------------------------------------------


def test_existing_directory_is_named_itself_else_its_parent(root: Path, home: Path, outer: Path) -> None:
    assert scan(f"rm -rf {outer}/data", root, home).dirs == [str(outer / "data")]
    assert scan(f"rm -rf {outer}/missing/deeper", root, home).dirs == [str(outer / "missing")]
    assert scan(f"cat {outer}/file.txt", root, home).dirs == [str(outer)]


def test_one_entry_per_directory(root: Path, home: Path, outer: Path) -> None:
    found = scan(f"cat {outer}/a {outer}/b > {outer}/c; cp {outer}/d /etc/", root, home)
    assert found.dirs == [str(outer), "/etc"]
    assert found.dir_patterns == [f"{outer}/*", "/etc/*"]


def test_inside_paths_ask_nothing(root: Path, home: Path) -> None:
    found = scan(f"rm -rf sub {root}/sub ./x ../project/y > out < in", root, home)
    assert found.dirs == []


def test_options_are_not_paths(root: Path, home: Path) -> None:
    assert scan("rm -rf -- -x", root, home).dirs == []
    assert scan("chmod +x /etc/x", root, home).dirs == ["/etc"]
    assert scan("cp --target-directory=/srv/x a", root, home).dirs == ["/srv"]


def test_any_command_asks_for_an_existing_outside_path(root: Path, home: Path, outer: Path) -> None:
    (outer / "file.txt").write_text("x")
    # the same shape as the file commands: a directory itself, a file its directory
    assert scan(f"ls -a {outer}/data", root, home).dirs == [str(outer / "data")]
    assert scan(f"awk 1 {outer}/file.txt", root, home).dirs == [str(outer)]
    assert scan(f"awk 1 {outer}/file.txt", root, home).dirs == scan(f"cat {outer}/file.txt", root, home).dirs
    assert scan(f"diff a {outer}/file.txt {outer}/data", root, home).dirs == [str(outer), str(outer / "data")]
    # option values and assignments, tilde, $HOME, cd tracking, globs
    assert scan(f"tool --dir={outer}/data", root, home).dirs == [str(outer / "data")]
    assert scan(f"tool -o={outer}/file.txt", root, home).dirs == [str(outer)]
    assert scan(f"make DESTDIR={outer}", root, home).dirs == [str(outer)]
    assert scan("tool --config=~", root, home).dirs == [str(home)]
    assert scan("du -sh ~ $HOME", root, home).dirs == [str(home)]
    assert scan(f"cd {outer}; wc -l file.txt", root, home).dirs == [str(outer)]
    assert scan(f"python {outer}/fi*", root, home).dirs == [str(outer)]
    assert scan(f"python {outer}/zz*", root, home).dirs == [str(outer)]


def test_any_command_ignores_words_naming_nothing(root: Path, home: Path, outer: Path) -> None:
    (root / "src").mkdir()
    for command in [
        f"awk 1 {outer}/missing",
        f"tool --out={outer}/missing/deeper",
        "git log -n 5 HEAD~1 -- src",
        "curl -s https://example.com/etc",
        "echo /not/an/existing/path 42 -n",
        "grep -rn '/etc' src",  # a file command's pattern is not a path (its own argument rules)
        "tool --flag= -",
        "/usr/bin/env",  # the command name is not an argument
        "ls /dev/null",
    ]:
        assert scan(command, root, home).dirs == [], command


def test_symlink_inside_pointing_outside(root: Path, home: Path, outer: Path) -> None:
    (root / "link").symlink_to(outer, target_is_directory=True)
    assert scan("cat link/file.txt", root, home).dirs == [str(outer)]
    assert scan("rm -rf link/data", root, home).dirs == [str(outer / "data")]


def test_globs_keep_their_literal_prefix(root: Path, home: Path) -> None:
    assert scan("cat /etc/*", root, home).dirs == ["/etc"]
    assert scan("cat /etc/pass?d", root, home).dirs == ["/etc"]
    assert scan("cat /etc/{passwd,group}", root, home).dirs == ["/etc"]
    assert scan("rm *", root, home).dirs == []
    assert scan("rm '/etc/*'x", root, home).dirs == ["/etc"]


def test_harmless_devices_are_not_reported(root: Path, home: Path) -> None:
    found = scan(
        "cmd > /dev/null 2>/dev/stderr < /dev/zero; cat /dev/null; dd if=/dev/urandom of=x", root, home
    )
    assert found.dirs == []
    assert scan("echo x > /dev/sda", root, home).dirs == ["/dev"]


def test_fd_duplication_is_not_a_path(root: Path, home: Path) -> None:
    assert scan("cmd 2>&1 >&2 3<&0 4>&-", root, home).dirs == []


def test_redirection_targets(root: Path, home: Path, outer: Path) -> None:
    for redirect in (">", ">>", "2>", "&>", "&>>", ">|", "<", ">&"):
        assert scan(f"cmd {redirect} {outer}/f", root, home).dirs == [str(outer)], redirect
    assert scan(f"cat <<EOF > {outer}/f\nx\nEOF", root, home).dirs == [str(outer)]


# -- words -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "word",
    [
        '"/etc/pass wd"',
        "'/etc/pass wd'",
        "/etc/pass\\ wd",
        "'/etc'/passwd",
        '"/e"tc/passwd',
        "$'\\x2fetc/passwd'",
        "$'\\057etc/passwd'",
        "/tmp/../etc/passwd",
        "//etc/passwd",
    ],
)
def test_quoting_and_escapes_are_undone(root: Path, home: Path, word: str) -> None:
    assert scan(f"cat {word}", root, home).dirs in (["/etc"], ["//etc"])


def test_tilde_and_home(root: Path, home: Path) -> None:
    for word in ("~/x", "~", "$HOME/x", "${HOME}/x", '"$HOME/x"'):
        assert scan(f"cat {word}", root, home).dirs == [str(home)], word
    root_home = os.path.expanduser("~root")
    assert scan("cat ~root/x", root, home).dirs == [root_home]
    assert scan("cat '~'/x", root, home).dirs == []


def test_variables(root: Path, home: Path, outer: Path) -> None:
    assert scan(f"D={outer}; rm $D/x", root, home).dirs == [str(outer)]
    assert scan("rm $UNSET_VARIABLE/x", root, home).dirs == ["/"]
    assert scan("rm $OUT/x", root, home, OUT=str(outer)).dirs == [str(outer)]
    assert scan(f"X={outer} rm $X/x", root, home).dirs == ["/"]  # $X is expanded before X is set
    assert scan("read D; rm $D/x", root, home).dirs == []
    assert scan("for D in a; do rm $D/x; done", root, home).dirs == []
    assert scan("rm $RANDOM/x ${D:-/etc}/x $(pwd)/x", root, home).dirs == []
    assert scan(f"(D={outer}); rm $D/x", root, home).dirs == ["/"]
    assert scan(f"export D={outer}; unset D; rm $D/x", root, home).dirs == ["/"]


def test_pwd_follows_cd(root: Path, home: Path, outer: Path) -> None:
    assert scan(f"cd {outer}; rm $PWD/x", root, home).dirs == [str(outer)]


# -- the working directory ------------------------------------------------------------------------------


def test_cd_changes_the_directory_of_later_commands(root: Path, home: Path, outer: Path) -> None:
    assert scan(f"cd {outer} && rm -rf data", root, home).dirs == [str(outer), str(outer / "data")]
    assert scan(f"cd {outer}; cd ..; cat x", root, home).dirs == [str(outer), str(outer.parent)]
    assert scan("cd sub; cat ../../x", root, home).dirs == [str(root.parent)]


def test_cd_is_scoped_like_the_shell(root: Path, home: Path, outer: Path) -> None:
    assert scan(f"(cd {outer}); rm -rf data", root, home).dirs == [str(outer)]
    assert scan(f"cd {outer} | rm -rf data", root, home).dirs == [str(outer)]
    assert scan(f"cd {outer} & rm -rf data", root, home).dirs == [str(outer)]
    assert scan(f"echo $(cd {outer}); rm -rf data", root, home).dirs == [str(outer)]
    assert scan(f"f() {{ cd {outer}; }}; rm -rf data", root, home).dirs == [str(outer)]


def test_cd_forms(root: Path, home: Path, outer: Path) -> None:
    assert scan("cd; cat x", root, home).dirs == [str(home)]
    assert scan(f"cd {outer}; cd -; cat x", root, home).dirs == [str(outer)]
    assert scan(f"pushd {outer}; popd; cat x", root, home).dirs == [str(outer)]
    assert scan(f"pushd {outer} && cat x", root, home).dirs == [str(outer)]
    assert scan('cd "$(mktemp -d)"; cat x', root, home).dirs == []


def test_redirection_uses_the_directory_before_the_command(root: Path, home: Path, outer: Path) -> None:
    assert scan(f"cd {outer} > log", root, home).dirs == [str(outer)]


def test_workdir_is_the_starting_directory(root: Path, home: Path, outer: Path) -> None:
    assert scan("cat x", root, home, cwd=outer).dirs == [str(outer)]
    assert scan("cat x", root, home, cwd=root / "sub").dirs == []


def test_env_chdir_runs_the_wrapped_command_there(root: Path, home: Path, outer: Path) -> None:
    assert scan(f"env -C {outer} rm -rf data", root, home).dirs == [str(outer), str(outer / "data")]


# -- refusals ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    ['echo "unterminated', "echo )", "if then fi", "exec 3<> file", "bash -c 'echo \"x'", "eval 'echo )'"],
)
def test_commands_that_do_not_parse_are_refused(root: Path, home: Path, command: str) -> None:
    with pytest.raises(ToolError, match=r"^Failed to parse command$"):
        scan(command, root, home)


def test_scripts_nested_too_deep_are_refused(root: Path, home: Path) -> None:
    command = "echo deep"
    for _ in range(_shell_scan.MAX_SCRIPT_DEPTH):
        command = "eval " + "'" + command.replace("'", "'\\''") + "'"
    scan(command, root, home)
    with pytest.raises(ToolError, match=r"^Failed to parse command$"):
        scan("eval " + "'" + command.replace("'", "'\\''") + "'", root, home)


def test_deeply_nested_substitutions_do_not_crash(root: Path, home: Path) -> None:
    command = "echo " + "$(echo " * 400 + "x" + ")" * 400
    try:
        scan(command, root, home)
    except ToolError as error:
        assert str(error) == "Failed to parse command"
