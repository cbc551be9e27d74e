"""``opencode models`` (what the configured providers offer, offline) and ``opencode run --variant``."""

from __future__ import annotations

import json
from pathlib import Path

from _scripted import ScriptedModel, configure, local_config, opencode


def configured(project_dir: Path, url: str) -> None:
    config = local_config(url)
    config["provider"]["local"]["models"] = {
        "scripted-model": {
            "limit": {"context": 8000, "output": 1000},
            "variants": {"deep": {"reasoning_effort": "high"}, "quick": {"reasoning_effort": "low"}},
        },
        "other-model": {},
    }
    configure(project_dir, config)


def test_models_lists_each_providers_models_with_limits_and_variants(
    project_dir: Path, scripted_model: ScriptedModel, env: dict[str, str]
) -> None:
    configured(project_dir, scripted_model.url)
    done = opencode(project_dir, env, "models")
    assert done.returncode == 0, done.stderr
    assert "local/scripted-model  context 8 000, output 1 000  variants: deep, quick" in done.stdout
    assert "anthropic/claude-sonnet-4…  context 200 000, output 64 000" in done.stdout
    listed = json.loads(opencode(project_dir, env, "models", "local", "--json").stdout)
    [local] = listed["providers"]
    assert local["origin"] == "config" and local["usable"] is True
    assert [m["id"] for m in local["models"]] == ["other-model", "scripted-model"]
    anthropic = json.loads(opencode(project_dir, env, "models", "anthropic", "--json").stdout)["providers"][0]
    assert anthropic["models"] == [] and anthropic["variants"] == ["high", "max"]
    missing = opencode(project_dir, env, "models", "locl")
    assert missing.returncode == 2 and "did you mean local" in missing.stderr
    assert scripted_model.requests() == []  # offline: no provider was asked


def test_run_variant_lays_its_options_over_the_request(
    project_dir: Path, scripted_model: ScriptedModel, env: dict[str, str]
) -> None:
    configured(project_dir, scripted_model.url)
    scripted_model.script([{"text": "thought hard"}, {"text": "plain"}])
    done = opencode(project_dir, env, "run", "think", "--variant", "deep")
    assert done.returncode == 0, done.stderr
    assert scripted_model.requests()[0]["body"]["reasoning_effort"] == "high"
    plain = opencode(project_dir, env, "run", "plain")
    assert plain.returncode == 0 and "reasoning_effort" not in scripted_model.requests()[1]["body"]
    wrong = opencode(project_dir, env, "run", "x", "--variant", "max", "--format", "json")
    assert wrong.returncode == 2 and "variants: deep, quick" in wrong.stderr
    assert json.loads(wrong.stdout.splitlines()[-1])["type"] == "exit"
    assert len(scripted_model.requests()) == 2
