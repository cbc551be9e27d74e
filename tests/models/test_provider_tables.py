"""``[provider.NAME]`` tables: parsed into ``Generation.providers``, misspellings warned, wrong types
refused with the key path, ``{env:VAR}`` filled in from the project's environment."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _scripted import configure

from opencode_cli.errors import ConfigError
from opencode_cli.models import Limits, ModelInfo
from opencode_cli.models.config import ProviderConfig, default_key_env, providers
from opencode_cli.project import Project

ProjectFactory = Callable[..., Project]


def test_a_full_table(make_project: ProjectFactory, project_dir: Path, warnings: list[str]) -> None:
    configure(
        project_dir,
        {
            "provider": {
                "local": {
                    "name": "My {env:WHO} box",
                    "npm": "@ai-sdk/openai-compatible",
                    "whitelist": ["qwen3"],  # OpenCode's, not used: accepted silently
                    "options": {
                        "baseURL": "http://{env:HOST}:8080/v1",
                        "apiKey": "{env:MISSING}",
                        "headers": {"X-Team": "{env:WHO}"},
                        "timeout": False,
                    },
                    "models": {
                        "qwen3": {
                            "id": "qwen3-32b",
                            "limit": {"context": 32768, "output": 8192},
                            "options": {"top_k": 20},
                            "cost": {"input": 0},  # dollars per million tokens (opencode stats)
                        }
                    },
                }
            }
        },
    )
    project = make_project(extra_env={"WHO": "tools", "HOST": "10.0.0.2"})
    [local] = project.generation.providers.values()
    assert local == ProviderConfig(
        name="local",
        title="My tools box",
        npm="@ai-sdk/openai-compatible",
        base_url="http://10.0.0.2:8080/v1",
        api_key="",  # an unset variable is empty, as in OpenCode: no key
        headers={"X-Team": "tools"},
        timeout_ms=False,
        models={
            "qwen3": ModelInfo(
                "qwen3",
                api_id="qwen3-32b",
                limits=Limits(32768, None, 8192),
                options={"top_k": 20},
                cost={"input": 0.0},
            )
        },
    )
    assert local.timeout is None and local.key({"LOCAL_API_KEY": "k"}) == "k"
    assert "api_key" not in repr(local)  # a key is never shown
    assert warnings == []


def test_no_table_no_providers(make_project: ProjectFactory) -> None:
    assert make_project().generation.providers == {}


def test_misspelt_keys_are_warned_with_the_close_match(
    make_project: ProjectFactory, project_dir: Path, warnings: list[str]
) -> None:
    configure(
        project_dir,
        {
            "provider": {
                "local": {
                    "optons": {},
                    "options": {"baseUrl": "http://x/v1", "apikey": "k"},
                    "models": {"m": {"limits": {}, "limit": {"contxt": 1}}},
                }
            }
        },
    )
    make_project().generation.providers  # noqa: B018 - parsed here
    assert warnings == [
        "unknown config key 'provider.local.optons' (did you mean 'provider.local.options'?); it is ignored",
        "unknown config key 'provider.local.options.baseUrl' "
        "(did you mean 'provider.local.options.baseURL'?); it is ignored",
        "unknown config key 'provider.local.options.apikey' "
        "(did you mean 'provider.local.options.apiKey'?); it is ignored",
        "unknown config key 'provider.local.models.m.limits' "
        "(did you mean 'provider.local.models.m.limit'?); it is ignored",
        "unknown config key 'provider.local.models.m.limit.contxt' (did you mean "
        "'provider.local.models.m.limit.context'?); it is ignored",
    ]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"local": "http://x"}, "provider.local must be a table, not 'http://x'"),
        ({"local": {"npm": 3}}, "provider.local.npm must be a string, not 3"),
        (
            {"local": {"options": {"baseURL": "localhost:8080"}}},
            "provider.local.options.baseURL must be an http:// or https:// URL, not 'localhost:8080'",
        ),
        (
            {"local": {"options": {"headers": {"X": 1}}}},
            "provider.local.options.headers must be a table of strings, not {'X': 1}",
        ),
        (
            {"local": {"options": {"timeout": -5}}},
            "provider.local.options.timeout must be a positive number of milliseconds or false, not -5",
        ),
        (
            {"local": {"env": "KEY"}},
            "provider.local.env must be a list of environment variable names, not 'KEY'",
        ),
        (
            {"local": {"models": {"m": {"limit": {"context": "big"}}}}},
            "provider.local.models.m.limit.context must be a number of tokens "
            "(a whole number, 0 or more), not 'big'",
        ),
        (
            {"local": {"models": {"m": {"options": []}}}},
            "provider.local.models.m.options must be a table, not []",
        ),
    ],
)
def test_wrong_types_name_the_key_path(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        providers({"provider": table}, {})
    assert str(caught.value) == message


def test_the_default_key_variable() -> None:
    assert default_key_env("openai") == "OPENAI_API_KEY"
    assert default_key_env("my-llm.box") == "MY_LLM_BOX_API_KEY"


def test_a_table_laid_over_a_builtin() -> None:
    from opencode_cli.models.openai_compatible import OPENAI

    table, _ = providers(
        {"provider": {"openai": {"models": {"gpt-5": {}}, "options": {"timeout": 1000}}}}, {}
    )
    merged = table["openai"].over(OPENAI)
    assert (merged.base_url, merged.npm, merged.title, merged.key_env) == (
        "https://api.openai.com/v1",
        "@ai-sdk/openai",
        "OpenAI",
        ("OPENAI_API_KEY",),
    )
    assert (merged.timeout, merged.key_required, list(merged.models)) == (1.0, True, ["gpt-5"])
    moved, _ = providers({"provider": {"openai": {"options": {"baseURL": "http://proxy/v1"}}}}, {})
    assert moved["openai"].over(OPENAI).key_required is False  # an endpoint of your own may take no key
