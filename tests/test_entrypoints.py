"""Entry-point discovery and its cache, against real ``*.dist-info`` directories on ``sys.path``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from opencode_cli.entrypoints import EntryPoint, discover, search_path


def make_distribution(site: Path, name: str, entry: str, version: str = "1.0") -> Path:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[opencode]\n{entry}\n")
    return info


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def test_discovers_and_loads(site: Path, tmp_path: Path) -> None:
    (site / "demo_mod.py").write_text("class Holder:\n    value = 42\n")
    make_distribution(site, "opencode-demo", "demo = demo_mod:Holder.value", "2.5")
    found = [e for e in discover("opencode", tmp_path / "cache") if e.name == "demo"]
    assert found == [EntryPoint("demo", "demo_mod:Holder.value", "opencode-demo", "2.5")]
    assert found[0].load() == 42
    sys.modules.pop("demo_mod", None)


def test_cache_is_used_until_a_path_directory_changes(site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    info = make_distribution(site, "opencode-one", "one = json")
    assert "one" in [e.name for e in discover("opencode", cache)]
    assert len(list(cache.glob("entry-points-opencode-*.json"))) == 1

    # Change the distribution without touching the site directory's mtime: the cached answer stands.
    stamp = site.stat()
    (info / "entry_points.txt").write_text("[opencode]\n")
    os.utime(site, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert "one" in [e.name for e in discover("opencode", cache)]

    # Installing another distribution changes the site directory: the cache is rebuilt.
    make_distribution(site, "opencode-two", "two = json")
    os.utime(site, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 10**9))
    names = [e.name for e in discover("opencode", cache)]
    assert "two" in names and "one" not in names


def test_no_cache_dir_means_a_fresh_scan(site: Path) -> None:
    make_distribution(site, "opencode-three", "three = json")
    assert "three" in [e.name for e in discover("opencode", None)]


def test_corrupt_cache_is_rebuilt(site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    discover("opencode", cache)
    (stored,) = cache.glob("entry-points-opencode-*.json")
    stored.write_text("{not json")
    make_distribution(site, "opencode-four", "four = json")
    assert "four" in [e.name for e in discover("opencode", cache)]


def test_a_removed_distribution_is_never_served_from_the_cache(site: Path, tmp_path: Path) -> None:
    import shutil

    cache = tmp_path / "cache"
    info = make_distribution(site, "opencode-five", "five = json")
    assert "five" in [e.name for e in discover("opencode", cache)]
    shutil.rmtree(info)  # pip uninstall: the site directory changes
    assert "five" not in [e.name for e in discover("opencode", cache)]


def test_an_installed_distribution_is_seen_at_once(site: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert "six" not in [e.name for e in discover("opencode", cache)]
    make_distribution(site, "opencode-six", "six = json")  # pip install, no touching of mtimes by hand
    assert "six" in [e.name for e in discover("opencode", cache)]


def test_an_edited_plugin_module_is_loaded_as_it_is_now(site: Path, tmp_path: Path) -> None:
    """Only the entry points are cached, never what they lead to: the module is imported afresh."""
    cache = tmp_path / "cache"
    (site / "edited_mod.py").write_text("VALUE = 1\n")
    make_distribution(site, "opencode-seven", "seven = edited_mod:VALUE")
    (entry,) = [e for e in discover("opencode", cache) if e.name == "seven"]
    assert entry.load() == 1
    sys.modules.pop("edited_mod", None)
    (site / "edited_mod.py").write_text("VALUE = 2  # edited\n")  # another size: no stale bytecode
    (entry,) = [e for e in discover("opencode", cache) if e.name == "seven"]
    assert entry.load() == 2
    sys.modules.pop("edited_mod", None)


def test_two_environments_keep_a_cache_file_each(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two environments sharing a cache directory (another ``sys.path``) do not push each other out."""
    cache = tmp_path / "cache"
    make_distribution(site, "opencode-eight", "eight = json")
    assert "eight" in [e.name for e in discover("opencode", cache)]
    other = tmp_path / "other-site"
    make_distribution(other, "opencode-nine", "nine = json")
    with monkeypatch.context() as patch:
        patch.syspath_prepend(str(other))
        assert "nine" in [e.name for e in discover("opencode", cache)]
    files = sorted(cache.glob("entry-points-opencode-*.json"))
    assert len(files) == 2
    stamps = [f.stat().st_mtime_ns for f in files]
    names = [e.name for e in discover("opencode", cache)]  # the first environment again: its own file answers
    assert "eight" in names and "nine" not in names
    assert [f.stat().st_mtime_ns for f in files] == stamps


@pytest.mark.parametrize("cached", [False, True], ids=["fresh", "cached"])
def test_plugin_path_narrows_the_search_to_its_directories(site: Path, tmp_path: Path, cached: bool) -> None:
    make_distribution(site, "opencode-user", "user = json")  # on sys.path, as a user's own plugin is
    mine = tmp_path / "mine"
    make_distribution(mine, "opencode-mine", "mine = json")
    other = tmp_path / "other"
    make_distribution(other, "opencode-other", "other = json", "3.0")
    cache = tmp_path / "cache" if cached else None
    everything = [e.name for e in discover("opencode", cache)]
    assert "user" in everything and "mine" not in everything
    path = search_path({"OPENCODE_PLUGIN_PATH": f"{mine}{os.pathsep}{other}"})
    assert path == [str(mine), str(other)]
    assert discover("opencode", cache, path) == [
        EntryPoint("mine", "json", "opencode-mine", "1.0"),
        EntryPoint("other", "json", "opencode-other", "3.0"),
    ]
    assert discover("opencode", cache, [str(mine)]) == [EntryPoint("mine", "json", "opencode-mine", "1.0")]
    assert discover("opencode", cache, search_path({"OPENCODE_PLUGIN_PATH": ""})) == []
    assert search_path({}) is None  # unset: every directory of sys.path, as before
    assert "user" in [e.name for e in discover("opencode", cache, search_path({}))]


def test_plugin_path_keeps_the_first_distribution_of_a_name(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    make_distribution(first, "opencode-twin", "twin = json", "1.0")
    make_distribution(second, "opencode-twin", "twin = os", "2.0")
    assert discover("opencode", None, [str(first), str(second)]) == [
        EntryPoint("twin", "json", "opencode-twin", "1.0")
    ]


def test_one_scan_answers_the_groups_scanned_together(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import opencode_cli.entrypoints as entrypoints

    info = make_distribution(site, "opencode-six", "six = json")
    (info / "entry_points.txt").write_text("[opencode]\nsix = json\n\n[llm]\nsix_llm = json\n")
    scans: list[tuple[str, ...]] = []
    scan = entrypoints._scan

    def counted(groups: tuple[str, ...], path: object) -> dict[str, list[EntryPoint]]:
        scans.append(tuple(groups))
        return scan(groups, path)  # type: ignore[arg-type]

    monkeypatch.setattr(entrypoints, "_scan", counted)
    cache = tmp_path / "cache"
    assert "six" in [e.name for e in discover("opencode", cache)]
    assert "six_llm" in [e.name for e in discover("llm", cache)]  # from the cache the first scan wrote
    assert scans == [("opencode", "llm")]
    assert "six" not in [e.name for e in discover("llm", cache)]
