"""The external_directory guard (core spec §5, §11.5, with symlinks resolved), and an adversarial table of
targets read with the real ``read`` tool: none may be read without an ``external_directory`` ask."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.boundary import assert_external_directory, external_pattern, is_inside
from opencode_cli.config import find_worktree
from opencode_cli.context import PermissionRequest
from opencode_cli.errors import RejectedError, ToolError
from opencode_cli.files import contains
from opencode_cli.project import Project
from opencode_cli.session import Decision

REJECTED = "The user rejected permission to use this specific tool call."


class Asks(list[PermissionRequest]):
    """An asker that records every request and allows it."""

    async def __call__(self, request: PermissionRequest) -> None:
        self.append(request)


def guard(
    target: str | Path | None,
    directory: Path,
    worktree: Path | None,
    *,
    kind: str = "file",
    bypass: bool = False,
) -> tuple[bool, Asks]:
    asks = Asks()
    project = Project(directory, env={"HOME": str(directory.parent)}, autoload_plugins=False)
    try:
        ctx = project.session().context("read", None)
        ctx.directory, ctx.worktree, ctx.asker = directory, worktree, asks  # every ask recorded
        asked = asyncio.run(assert_external_directory(ctx, target, kind=kind, bypass=bypass))  # type: ignore[arg-type]
    finally:
        project.close()
    assert asked == bool(asks)
    return asked, asks


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """``tmp_path`` with any symlinks in it resolved, so expected patterns are real paths."""
    return Path(os.path.realpath(tmp_path))


@pytest.fixture
def outside(base: Path) -> Path:
    folder = base / "outside"
    folder.mkdir()
    (folder / "file.txt").write_text("outside\n")
    return folder


@pytest.fixture
def project_root(base: Path) -> Path:
    """A git project: ``.git`` marks it as the worktree root."""
    path = base / "project"
    (path / ".git").mkdir(parents=True)
    (path / "src").mkdir()
    (path / "src" / "main.py").write_text("print('hi')\n")
    return path


# -- core §11.5 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [None, ""])
def test_no_op_for_an_empty_target(project_root: Path, target: str | None) -> None:
    assert guard(target, project_root, project_root) == (False, [])


def test_no_op_with_bypass(project_root: Path, outside: Path) -> None:
    assert guard(outside / "file.txt", project_root, project_root, bypass=True) == (False, [])
    assert guard("/etc/hostname", project_root, project_root, bypass=True, kind="directory") == (False, [])


@pytest.mark.parametrize(
    "relative", ["src/main.py", "src", ".", "src/not-yet/new.py", ".git/config", "a/../b"]
)
def test_no_op_inside_the_directory(project_root: Path, relative: str) -> None:
    target = os.path.normpath(project_root / relative)
    assert guard(target, project_root, project_root) == (False, [])
    assert guard(target, project_root, None) == (False, [])


def test_the_directory_itself_is_inside_for_either_kind(project_root: Path) -> None:
    assert guard(project_root, project_root, project_root, kind="directory") == (False, [])
    assert guard(project_root, project_root, project_root, kind="file") == (False, [])


def test_outside_file_asks_once_with_the_parent_glob(project_root: Path, outside: Path) -> None:
    asked, asks = guard(outside / "file.txt", project_root, project_root)
    assert asked
    (request,) = asks
    assert request.permission == "external_directory"
    assert request.patterns == request.always == [f"{outside}/*"]
    assert request.metadata == {"filepath": str(outside / "file.txt"), "parentDir": str(outside)}


def test_outside_file_that_does_not_exist_still_asks(project_root: Path, outside: Path) -> None:
    _, (request,) = guard(outside / "later" / "new.txt", project_root, project_root)
    assert request.patterns == [f"{outside}/later/*"]
    assert request.metadata == {
        "filepath": str(outside / "later" / "new.txt"),
        "parentDir": str(outside / "later"),
    }


def test_kind_directory_uses_the_target_itself(project_root: Path, outside: Path) -> None:
    _, (request,) = guard(outside, project_root, project_root, kind="directory")
    assert request.patterns == request.always == [f"{outside}/*"]
    assert request.metadata == {"filepath": str(outside), "parentDir": str(outside)}
    # the same target as a "file" asks for its parent
    _, (as_file,) = guard(outside, project_root, project_root)
    assert as_file.patterns == [f"{outside.parent}/*"]


def test_root_file_uses_the_root_glob(project_root: Path) -> None:
    _, (request,) = guard("/hostname-like", project_root, project_root)
    assert request.patterns == ["/*"] and request.metadata["parentDir"] == "/"


def test_worktree_root_counts_as_inside(base: Path) -> None:
    repo = base / "repo"
    (repo / ".git").mkdir(parents=True)
    package = repo / "packages" / "app"
    package.mkdir(parents=True)
    (repo / "README.md").write_text("top\n")
    assert find_worktree(package) == repo
    assert guard(repo / "README.md", package, repo) == (False, [])
    assert guard(repo / "packages" / "lib" / "x.py", package, repo) == (False, [])
    assert guard(repo, package, repo, kind="directory") == (False, [])
    # beyond the worktree is outside again
    _, (request,) = guard(base / "elsewhere.txt", package, repo)
    assert request.patterns == [f"{base}/*"]
    # and without the worktree only the directory counts
    assert guard(repo / "README.md", package, None)[0] is True


def test_non_git_project_counts_only_its_directory(base: Path) -> None:
    plain = base / "plain" / "app"
    plain.mkdir(parents=True)
    (base / "plain" / "notes.txt").write_text("x\n")
    assert find_worktree(plain) is None
    project = Project(plain, env={"HOME": str(base)})
    assert project.worktree is None
    assert guard(plain / "main.py", plain, project.worktree) == (False, [])
    _, (request,) = guard(base / "plain" / "notes.txt", plain, project.worktree)
    assert request.patterns == [f"{base}/plain/*"]


def test_sibling_with_the_same_prefix_is_outside(project_root: Path) -> None:
    evil = Path(f"{project_root}-evil")
    evil.mkdir()
    _, (request,) = guard(evil / "x.txt", project_root, project_root)
    assert request.patterns == [f"{evil}/*"]
    assert not contains(str(project_root), str(evil))
    assert contains(str(project_root), str(project_root))
    assert contains(str(project_root), f"{project_root}/a/b")
    assert not contains(str(project_root), str(project_root.parent))


# -- symlinks ------------------------------------------------------------------------------------------


def test_file_link_inside_pointing_outside_asks_for_the_real_directory(
    project_root: Path, outside: Path
) -> None:
    link = project_root / "src" / "notes.txt"
    link.symlink_to(outside / "file.txt")
    _, (request,) = guard(link, project_root, project_root)
    assert request.patterns == request.always == [f"{outside}/*"]
    assert request.metadata == {"filepath": str(outside / "file.txt"), "parentDir": str(outside)}


def test_directory_link_inside_pointing_outside(project_root: Path, outside: Path) -> None:
    link = project_root / "vendor"
    link.symlink_to(outside, target_is_directory=True)
    _, (request,) = guard(link / "file.txt", project_root, project_root)
    assert request.patterns == [f"{outside}/*"]
    assert request.metadata["filepath"] == str(outside / "file.txt")
    _, (as_directory,) = guard(link, project_root, project_root, kind="directory")
    assert as_directory.patterns == [f"{outside}/*"]
    assert as_directory.metadata == {"filepath": str(outside), "parentDir": str(outside)}


def test_relative_link_pointing_outside(project_root: Path, outside: Path) -> None:
    link = project_root / "src" / "rel"
    link.symlink_to(Path("..", "..", "outside", "file.txt"))
    _, (request,) = guard(link, project_root, project_root)
    assert request.patterns == [f"{outside}/*"]


def test_new_target_under_a_linked_parent_is_judged_by_its_nearest_existing_ancestor(
    project_root: Path, outside: Path
) -> None:
    (project_root / "vendor").symlink_to(outside, target_is_directory=True)
    target = project_root / "vendor" / "not" / "yet" / "new.txt"
    _, (request,) = guard(target, project_root, project_root)
    assert request.patterns == [f"{outside}/not/yet/*"]
    assert request.metadata == {
        "filepath": str(outside / "not" / "yet" / "new.txt"),
        "parentDir": str(outside / "not" / "yet"),
    }


def test_dangling_link_pointing_outside_asks(project_root: Path, outside: Path) -> None:
    (project_root / "dangling").symlink_to(outside / "missing.txt")
    _, (request,) = guard(project_root / "dangling", project_root, project_root)
    assert request.patterns == [f"{outside}/*"]


def test_links_that_stay_inside_do_not_ask(project_root: Path) -> None:
    (project_root / "alias.py").symlink_to(project_root / "src" / "main.py")
    (project_root / "srclink").symlink_to(Path("src"), target_is_directory=True)
    for target in (
        project_root / "alias.py",
        project_root / "srclink" / "main.py",
        project_root / "srclink" / "new.py",
    ):
        assert guard(target, project_root, project_root) == (False, [])
    assert guard(project_root / "srclink", project_root, project_root, kind="directory") == (False, [])


def test_project_reached_through_a_link_is_still_inside(base: Path, project_root: Path) -> None:
    alias = base / "alias"
    alias.symlink_to(project_root, target_is_directory=True)
    # the project opened by its alias; targets given by either name
    assert guard(alias / "src" / "main.py", alias, alias) == (False, [])
    assert guard(project_root / "src" / "main.py", alias, alias) == (False, [])
    assert guard(alias / "src" / "main.py", project_root, project_root) == (False, [])


def test_link_to_the_worktree_from_outside_is_inside(base: Path, project_root: Path) -> None:
    (base / "shortcut").symlink_to(project_root / "src", target_is_directory=True)
    assert guard(base / "shortcut" / "main.py", project_root, project_root) == (False, [])


def test_pure_helpers(project_root: Path, outside: Path) -> None:
    (project_root / "out").symlink_to(outside, target_is_directory=True)
    assert is_inside(project_root / "src" / "main.py", project_root, None)
    assert not is_inside(project_root / "out" / "file.txt", project_root, project_root)
    assert external_pattern(project_root / "out" / "file.txt") == (str(outside), f"{outside}/*")
    assert external_pattern(project_root / "out", "directory") == (str(outside), f"{outside}/*")


# -- the adversarial table: the real read tool ------------------------------------------------------------

SECRET = "SECRET-OUTSIDE-7f3a"
UNICODE_SECRET = "SECRET-UNICODE-91bc"
INSIDE = "inside-content-42"


@dataclass
class World:
    base: Path
    project: Path  # the project directory, its own git worktree root
    outside: Path  # a sibling temp directory with secret.txt
    unicode_dir: Path


@pytest.fixture
def world(base: Path) -> World:
    project = base / "project"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / "sub" / "deep").mkdir(parents=True)
    (project / "inside.txt").write_text(f"{INSIDE}\n")
    (project / "~").mkdir()
    (project / "~" / "x").write_text("tilde is just a name\n")
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (base / "outside.txt").write_text(f"{SECRET}\n")
    unicode_dir = base / "ünïcødé-外部"
    unicode_dir.mkdir()
    (unicode_dir / "файл.txt").write_text(f"{UNICODE_SECRET}\n")
    Path(f"{project}-evil").mkdir()
    Path(f"{project}-evil", "secret.txt").write_text(f"{SECRET}\n")
    return World(base, project, outside, unicode_dir)


def link(path: Path, target: str | Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    return str(path)


def deep_dots(world: World, rest: str) -> str:
    """A relative path from the project directory with more ``..`` than needed to reach ``/``."""
    return "../" * (len(world.project.parts) + 3) + rest


# What each target must do:
#   ("ask", pattern)  one external_directory ask with that pattern, then the tool fails with the rejection
#   ("inside", text)  genuinely inside: no ask, and the read shows ``text``
#   ("missing", None) genuinely inside but absent: no ask, "File not found"
#   ("error", text)   fails with ``text`` before anything could be read (after any external ask: see loop)
Case = tuple[str, Callable[[World], str], tuple[str, Any]]


def _o(world: World) -> str:
    return f"{world.outside}/*"


CASES: list[Case] = [
    # `..` chains
    ("dotdot-sibling", lambda w: "../outside/secret.txt", ("ask", _o)),
    ("dotdot-to-etc", lambda w: deep_dots(w, "etc/hostname"), ("ask", lambda w: "/etc/*")),
    ("dotdot-two-levels", lambda w: "../../etc/hostname", ("ask", lambda w: f"{w.base.parent}/etc/*")),
    ("sub-dotdot", lambda w: "sub/../../outside.txt", ("ask", lambda w: f"{w.base}/*")),
    ("deep-sub-dotdot", lambda w: "sub/deep/../../../outside/secret.txt", ("ask", _o)),
    ("abs-with-dotdot", lambda w: f"{w.project}/sub/../../outside/secret.txt", ("ask", _o)),
    ("prefix-sibling", lambda w: "../project-evil/secret.txt", ("ask", lambda w: f"{w.project}-evil/*")),
    (
        "abs-prefix-sibling",
        lambda w: f"{w.project}-evil/secret.txt",
        ("ask", lambda w: f"{w.project}-evil/*"),
    ),
    # slashes and dots
    ("double-slash-root", lambda w: "//etc/hostname", ("ask", lambda w: "/etc/*")),
    ("dot-segments", lambda w: "/./etc/./hostname", ("ask", lambda w: "/etc/*")),
    ("triple-slash", lambda w: "///etc///hostname", ("ask", lambda w: "/etc/*")),
    ("duplicate-slashes", lambda w: f"/{w.outside}//secret.txt", ("ask", _o)),
    ("trailing-slash-file", lambda w: "../outside/secret.txt/", ("ask", _o)),
    ("trailing-slash-dir", lambda w: "../outside/", ("ask", _o)),
    ("etc-directory", lambda w: "/etc/", ("ask", lambda w: "/etc/*")),
    ("outside-directory", lambda w: str(w.outside), ("ask", _o)),
    ("project-parent", lambda w: "..", ("ask", lambda w: f"{w.base}/*")),
    ("project-parent-via-sub", lambda w: "sub/../..", ("ask", lambda w: f"{w.base}/*")),
    ("absolute-outside", lambda w: f"{w.outside}/secret.txt", ("ask", _o)),
    ("case-variant-missing", lambda w: "../OUTSIDE/secret.txt", ("ask", lambda w: f"{w.base}/OUTSIDE/*")),
    # symlinks
    (
        "file-link-to-etc",
        lambda w: link(w.project / "hostname", "/etc/hostname"),
        ("ask", lambda w: "/etc/*"),
    ),
    ("file-link-to-sibling", lambda w: link(w.project / "notes.txt", w.outside / "secret.txt"), ("ask", _o)),
    (
        "relative-file-link",
        lambda w: link(w.project / "sub" / "rel", "../../outside/secret.txt"),
        ("ask", _o),
    ),
    (
        "parent-link-to-etc",
        lambda w: link(w.project / "etc", "/etc") + "/hostname",
        ("ask", lambda w: "/etc/*"),
    ),
    ("parent-link-to-sibling", lambda w: link(w.project / "vendor", w.outside) + "/secret.txt", ("ask", _o)),
    ("dir-link-as-directory", lambda w: link(w.project / "vendor", w.outside), ("ask", _o)),
    (
        "link-chain",
        lambda w: link(w.project / "a", link(w.project / "sub" / "b", w.outside / "secret.txt")),
        ("ask", _o),
    ),
    (
        "nested-parent-link",
        lambda w: link(w.project / "sub" / "deep" / "up", "../../..") + "/outside/secret.txt",
        ("ask", _o),
    ),
    (
        "dangling-link-outside",
        lambda w: link(w.project / "dangling", w.outside / "not-there.txt"),
        ("ask", _o),
    ),
    (
        "new-path-under-linked-parent",
        lambda w: link(w.project / "vendor", w.outside) + "/new/deeper.txt",
        ("ask", lambda w: f"{w.outside}/new/*"),
    ),
    (
        "link-retargeted-before-the-call",
        lambda w: retarget(link(w.project / "late", w.project / "inside.txt"), w.outside / "secret.txt"),
        ("ask", _o),
    ),
    # a path no system call would take is refused by its length alone, before anything examines it (so
    # nothing about an outside place is revealed, and nothing is asked)
    ("name-too-long-outside", lambda w: "/etc/" + "x" * 300, ("refused", "a name in the path is 300 bytes")),
    # a path that cannot be examined is reported only after the ask
    (
        "file-as-directory-outside",
        lambda w: "../outside/secret.txt/x",
        ("ask", lambda w: f"{w.outside}/secret.txt/*"),
    ),
    # a loop has no target at all: resolution stops at the first link seen twice, which is inside here, and
    # the read fails like the OS does; nothing outside can be reached through it (see the loop tests below)
    (
        "loop-through-outside",
        lambda w: loop(w.project / "loop", w.outside / "loop-back"),
        ("error", "Too many levels of symbolic links"),
    ),
    (
        "chain-longer-than-the-os-follows",
        lambda w: chain(w.project, 45, w.outside / "secret.txt"),
        ("ask", _o),
    ),
    (
        "loop-entered-from-outside",
        lambda w: loop(w.project / "loop", w.outside / "loop-back") and str(w.outside / "loop-back"),
        ("ask", _o),
    ),
    # .git
    ("through-git", lambda w: ".git/../../outside.txt", ("ask", lambda w: f"{w.base}/*")),
    ("through-git-hooks", lambda w: ".git/hooks/../../../outside/secret.txt", ("ask", _o)),
    ("link-in-git", lambda w: link(w.project / ".git" / "info", w.outside) + "/secret.txt", ("ask", _o)),
    # unicode
    ("unicode-absolute", lambda w: str(w.unicode_dir / "файл.txt"), ("ask", lambda w: f"{w.unicode_dir}/*")),
    ("unicode-relative", lambda w: "../ünïcødé-外部/файл.txt", ("ask", lambda w: f"{w.unicode_dir}/*")),
    (
        "unicode-link-name",
        lambda w: link(w.project / "ссылка", w.unicode_dir / "файл.txt"),
        ("ask", lambda w: f"{w.unicode_dir}/*"),
    ),
    # devices and /proc
    ("dev-null", lambda w: "/dev/null", ("ask", lambda w: "/dev/*")),
    ("proc-self-environ", lambda w: "/proc/self/environ", ("ask", lambda w: f"/proc/{os.getpid()}/*")),
    ("proc-self-root", lambda w: "/proc/self/root/etc/hostname", ("ask", lambda w: "/etc/*")),
    # genuinely inside
    ("plain-inside", lambda w: "inside.txt", ("inside", INSIDE)),
    ("dot-inside", lambda w: "./sub/../inside.txt", ("inside", INSIDE)),
    ("abs-double-slash-inside", lambda w: f"/{w.project}//inside.txt", ("inside", INSIDE)),
    ("tilde-is-relative", lambda w: "~/x", ("inside", "tilde is just a name")),
    ("tilde-user-is-relative", lambda w: "~root/.bashrc", ("missing", None)),
    ("dollar-home-is-relative", lambda w: "$HOME/.bashrc", ("missing", None)),
    ("fullwidth-solidus", lambda w: "..／..／etc／hostname", ("missing", None)),
    ("backslashes-are-names", lambda w: "..\\outside\\secret.txt", ("missing", None)),
    ("link-inside-to-inside", lambda w: link(w.project / "alias.txt", "inside.txt"), ("inside", INSIDE)),
    (
        "outside-alias-of-the-project",
        lambda w: link(w.base / "alias", w.project) + "/inside.txt",
        ("inside", INSIDE),
    ),
    ("the-project-itself", lambda w: str(w.project), ("inside", "inside.txt")),
    (
        "loop-inside",
        lambda w: link(w.project / "self", "self"),
        ("error", "Too many levels of symbolic links"),
    ),
]


def retarget(path: str, target: Path) -> str:
    """Point an existing link somewhere else (as a racing process would)."""
    temporary = path + ".new"
    os.symlink(target, temporary)
    os.replace(temporary, path)
    return path


def chain(project: Path, length: int, target: Path) -> str:
    """``c0`` -> ``c1`` -> ... -> ``target``, longer than the kernel's limit of 40 links."""
    for n in range(length - 1):
        (project / f"c{n}").symlink_to(f"c{n + 1}")
    (project / f"c{length - 1}").symlink_to(target)
    return str(project / "c0")


def loop(inside: Path, outside: Path) -> str:
    """``inside`` -> ``outside`` -> ``inside``: a loop that passes outside the project."""
    inside.symlink_to(outside)
    outside.symlink_to(inside)
    return str(inside)


class Recorder:
    """A session prompt that records each request and rejects it."""

    def __init__(self) -> None:
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Decision:
        self.requests.append(request)
        return Decision("reject")


def read(world: World, env: dict[str, str], target: str, prompt: Any) -> Any:
    project = Project(world.project, env=env, autoload_plugins=False)
    assert project.worktree == world.project
    return project.run_tool("read", {"filePath": target}, prompt=prompt)


def test_the_table_is_big_enough() -> None:
    assert sum(1 for _, _, (kind, _) in CASES if kind == "ask") >= 30
    assert len({name for name, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize(("name", "make", "expected"), CASES, ids=[case[0] for case in CASES])
def test_adversarial_target(
    world: World, env: dict[str, str], name: str, make: Callable[[World], str], expected: tuple[str, Any]
) -> None:
    kind, value = expected
    target = make(world)
    recorder = Recorder()
    if kind == "ask":
        with pytest.raises(RejectedError) as caught:
            read(world, env, target, recorder)
        assert str(caught.value) == REJECTED
        (request,) = recorder.requests  # exactly one ask, and it is the boundary's, before anything else
        assert request.permission == "external_directory"
        assert request.patterns == request.always == [value(world)]
        assert request.metadata["parentDir"] == (value(world)[:-2] or "/")
        assert not contains(str(world.project), request.metadata["filepath"])
    elif kind == "inside":
        result = read(world, env, target, recorder)
        assert recorder.requests == []
        assert value in result.output
        assert SECRET not in result.output and UNICODE_SECRET not in result.output
    elif kind == "missing":
        with pytest.raises(ToolError) as caught:
            read(world, env, target, recorder)
        assert str(caught.value).startswith(f"File not found: {os.path.normpath(world.project / target)}")
        assert recorder.requests == []
    else:
        with pytest.raises(ToolError) as caught:
            read(world, env, target, recorder)
        assert value in str(caught.value)
        assert recorder.requests == []


def test_with_approval_the_same_targets_do_read(world: World, env: dict[str, str]) -> None:
    """The guard is what stops the table's targets: approving the ask reads the file (so the table's
    rejections are not an accident of paths that cannot be read anyway)."""

    async def approve(request: PermissionRequest) -> Decision:
        return Decision("once")

    for target in (
        "../outside/secret.txt",
        "//" + str(world.outside / "secret.txt")[1:],
        link(world.project / "vendor", world.outside) + "/secret.txt",
        ".git/../../outside/secret.txt",
        "../ünïcødé-外部/файл.txt",
    ):
        output = read(world, env, target, approve).output
        assert SECRET in output or UNICODE_SECRET in output


# -- a link swapped while the user is being asked ----------------------------------------------------------


def test_link_swapped_during_the_read_prompt_is_judged_again(world: World, env: dict[str, str]) -> None:
    """``.env`` needs a ``read`` ask; while it is pending the link is pointed outside. The read must not
    follow it there without an external_directory ask."""
    (world.project / "real.env").write_text("INSIDE_ENV=1\n")
    env_link = world.project / ".env"
    env_link.symlink_to("real.env")
    seen: list[PermissionRequest] = []

    async def prompt(request: PermissionRequest) -> Decision:
        seen.append(request)
        if request.permission == "read":
            retarget(str(env_link), world.outside / "secret.txt")
            return Decision("once")
        return Decision("reject")

    with pytest.raises(RejectedError):
        read(world, env, ".env", prompt)
    assert [r.permission for r in seen] == ["read", "external_directory"]
    assert seen[1].patterns == [f"{world.outside}/*"]


def test_link_swapped_during_the_external_prompt_is_judged_again(world: World, env: dict[str, str]) -> None:
    """Approving one outside directory must not let a swapped link read another."""
    notes = world.project / "notes.txt"
    notes.symlink_to(world.outside / "secret.txt")
    seen: list[PermissionRequest] = []

    async def prompt(request: PermissionRequest) -> Decision:
        seen.append(request)
        if len(seen) == 1:
            retarget(str(notes), world.unicode_dir / "файл.txt")
            return Decision("once")
        return Decision("reject")

    with pytest.raises(RejectedError):
        read(world, env, str(notes), prompt)
    assert [r.patterns for r in seen] == [[f"{world.outside}/*"], [f"{world.unicode_dir}/*"]]


def test_link_swapped_back_inside_reads_without_a_second_ask(world: World, env: dict[str, str]) -> None:
    notes = world.project / "notes.txt"
    notes.symlink_to(world.outside / "secret.txt")
    seen: list[PermissionRequest] = []

    async def prompt(request: PermissionRequest) -> Decision:
        seen.append(request)
        retarget(str(notes), world.project / "inside.txt")
        return Decision("once")

    result = read(world, env, str(notes), prompt)
    assert INSIDE in result.output and SECRET not in result.output
    assert len(seen) == 1


def test_a_link_planted_where_the_root_was_does_not_widen_it(
    base: Path, project_root: Path, outside: Path
) -> None:
    """The project's root is judged as it was when first resolved: renaming the project and putting a link
    to another directory at its old path (what an unsandboxed command could do) makes that directory's
    files outside, not inside."""
    asks = Asks()
    project = Project(project_root, env={"HOME": str(base)}, autoload_plugins=False)
    try:
        ctx = project.session().context("read", None)
        ctx.asker = asks
        assert not asyncio.run(assert_external_directory(ctx, project_root / "src" / "main.py"))
        project_root.rename(base / "moved")
        project_root.symlink_to(outside)
        assert asyncio.run(assert_external_directory(ctx, project_root / "file.txt"))
        [request] = asks
        assert request.permission == "external_directory" and request.patterns == [f"{outside}/*"]
    finally:
        project.close()


_NAMES = st.sampled_from(["a", "b", "ab", "a.b", "..a", "é", " "])


@given(st.lists(_NAMES, max_size=4), st.lists(_NAMES, max_size=4))
def test_contains_is_relpath_s_answer_for_absolute_normalised_paths(
    parent: list[str], child: list[str]
) -> None:
    """``contains`` compares text; for absolute, normalised paths it answers as ``os.path.relpath`` does."""
    root, path = "/" + "/".join(parent), "/" + "/".join(child)
    rel = os.path.relpath(path, root)
    by_relpath = rel == "." or not (rel == ".." or rel.startswith("../"))
    assert contains(root, path) == by_relpath


@given(st.lists(_NAMES, max_size=4), st.lists(_NAMES, max_size=4))
def test_relative_is_relpath_s_answer(base: list[str], target: list[str]) -> None:
    """The file tools' ``relative`` (Node's ``path.relative``) takes a short cut below the base: the same
    answer as ``os.path.relpath``."""
    from opencode_cli.tools._paths import relative

    root, path = "/" + "/".join(base), "/" + "/".join(target)
    assert relative(root, path) == ("" if root == path else os.path.relpath(path, root))
