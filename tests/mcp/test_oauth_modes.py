"""OAuth with every conforming authorization server (issue 34, item 7): a server that takes ``initialize``
without a token, a 403 scope step-up (once), Basic-only and body-only token endpoints, and the
client-credentials grant with a secret and with a signed JWT; the servers are built from the SDK's
server pieces (``servers/oauth_server.py``) on 127.0.0.1, the CLI runs as real processes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _mcp_servers import stop
from _processes import run_opencode
from test_oauth import (  # the fixtures too: this module's cli_env is test_oauth's
    OAuthServer,
    _start_oauth_server,
    callback_port,
    cli_env,
    configure,
    credentials_file,
    run_sign_in,
    sign_in,
    status_of,
)

pytestmark = pytest.mark.slow
__all__ = ["callback_port", "cli_env"]


@pytest.fixture
def start_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Start an OAuth server with the given options; every one started is stopped at teardown."""
    started: list[OAuthServer] = []

    def start(*args: str) -> OAuthServer:
        server = _start_oauth_server(tmp_path_factory.mktemp("oauth") / "server.log", *args)
        started.append(server)
        return server

    yield start
    for server in started:
        stop(server.process)


def call(project_dir: Path, env: dict[str, str], tool: str, *args: str) -> Any:
    return run_opencode(project_dir, env, "tools", "run", f"secure_{tool}", *args, "--yes")


def test_a_server_that_refuses_after_initialize_needs_authentication_then_signs_in(
    start_server: Any, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    server = start_server("--lazy")
    configure(project_dir, server.url)

    status = status_of(project_dir, cli_env)
    assert status["status"] == "needs authentication", status
    assert "opencode mcp auth secure" in status["error"] and "TaskGroup" not in status["error"]
    listed = run_opencode(project_dir, cli_env, "mcp", "list")
    assert "needs authentication" in listed.stdout and "TaskGroup" not in listed.stdout

    done = sign_in(project_dir, cli_env, callback_port)
    assert "signed in to secure (3 tools)" in done.stdout
    assert status_of(project_dir, cli_env)["status"] == "connected"
    ran = call(project_dir, cli_env, "echo", "text=hi")
    assert ran.returncode == 0 and ran.stdout == "hi\n", ran.stderr


def test_a_403_for_a_wider_scope_asks_to_sign_in_again_and_then_works(
    start_server: Any, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    server = start_server("--step-up")
    configure(project_dir, server.url)
    first = sign_in(project_dir, cli_env, callback_port)
    assert "scope=tools" in first.url and "admin" not in first.url

    refused = call(project_dir, cli_env, "admin")
    assert refused.returncode == 1, refused.stdout
    assert 'needs authentication (run: opencode mcp auth secure): it asks for scope "tools admin"' in (
        refused.stderr + refused.stdout
    )
    assert server.control("grants")["refused_admin"] == 1
    ran = call(project_dir, cli_env, "echo", "text=still")  # the other tools keep working
    assert ran.returncode == 0 and ran.stdout == "still\n", ran.stderr

    again = sign_in(project_dir, cli_env, callback_port)
    assert "scope=tools+admin" in again.url, again.url
    ran = call(project_dir, cli_env, "admin")
    assert ran.returncode == 0 and ran.stdout == "admin done\n", ran.stderr
    assert server.control("grants")["refused_admin"] == 1


def test_a_server_that_keeps_refusing_is_reported_not_retried(
    start_server: Any, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    server = start_server("--stubborn")
    configure(project_dir, server.url)
    sign_in(project_dir, cli_env, callback_port)
    first = call(project_dir, cli_env, "admin")
    assert 'it asks for scope "tools admin"' in first.stderr + first.stdout
    again = sign_in(project_dir, cli_env, callback_port)
    assert "scope=tools+admin" in again.url

    refused = call(project_dir, cli_env, "admin")

    assert refused.returncode == 1
    said = refused.stderr + refused.stdout
    assert 'refused the request for lack of scope "tools admin", which its token already has' in said
    assert "Traceback" not in said
    assert server.control("grants")["refused_admin"] == 2  # once per call: asked once, not again
    assert not json.loads(credentials_file(cli_env).read_text())["secure"].get("scopeRequired")


@pytest.mark.parametrize(
    ("token_auth", "configured", "works"),
    [
        ("basic", None, True),  # advertises Basic only: Basic
        ("post", None, True),  # advertises the body only: the body
        ("none-named", None, True),  # names no method: Basic (RFC 8414's default)
        ("basic", "client_secret_post", False),  # the config wins, even where it is wrong
    ],
)
def test_the_token_endpoint_method_follows_the_authorization_server(
    start_server: Any,
    project_dir: Path,
    cli_env: dict[str, str],
    callback_port: int,
    token_auth: str,
    configured: str | None,
    works: bool,
) -> None:
    redirect = f"http://127.0.0.1:{callback_port}/mcp/oauth/callback"
    server = start_server("--client", f"opencode-test:s3cret:{redirect}", "--token-auth", token_auth)
    oauth = {"clientId": "opencode-test", "clientSecret": "s3cret"}
    if configured:
        oauth["tokenEndpointAuthMethod"] = configured
    configure(project_dir, server.url, oauth=oauth)

    done = run_sign_in(project_dir, cli_env, callback_port)

    if works:
        assert done.returncode == 0, done.stderr
        assert server.control("grants") == {"authorization_code": 1}
        ran = call(project_dir, cli_env, "echo", "text=ok")
        assert ran.returncode == 0 and ran.stdout == "ok\n", ran.stderr
    else:
        assert done.returncode == 1 and "Token exchange failed (401)" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


def test_client_credentials_with_a_secret_needs_no_browser(
    start_server: Any, project_dir: Path, cli_env: dict[str, str]
) -> None:
    server = start_server("--lazy", "--machine", "robot:r0b0t", "--token-auth", "post")
    configure(
        project_dir,
        server.url,
        oauth={
            "grant": "client_credentials",
            "clientId": "robot",
            "clientSecret": "r0b0t",
            "issuer": server.issuer,
        },
    )

    ran = call(project_dir, cli_env, "echo", "text=machine")

    assert ran.returncode == 0 and ran.stdout == "machine\n", ran.stderr
    grants = server.control("grants")
    assert grants["client_credentials"] == 1 and grants["token_auth_client_secret_post"] == 1
    assert "authorization_code" not in grants and "registration" not in grants
    again = call(project_dir, cli_env, "echo", "text=stored")  # the stored token, no new grant
    assert again.returncode == 0 and again.stdout == "stored\n", again.stderr
    assert server.control("grants")["client_credentials"] == 1


def test_client_credentials_with_basic_and_a_wrong_secret_is_a_clear_failure(
    start_server: Any, project_dir: Path, cli_env: dict[str, str]
) -> None:
    server = start_server("--machine", "robot:r0b0t")
    table = {"grant": "client_credentials", "clientId": "robot", "clientSecret": "r0b0t"}
    configure(project_dir, server.url, oauth=table)
    assert call(project_dir, cli_env, "echo", "text=x").returncode == 0
    assert server.control("grants")["token_auth_client_secret_basic"] == 1  # both advertised: Basic

    credentials_file(cli_env).unlink()
    configure(project_dir, server.url, oauth={**table, "clientSecret": "wrong"})
    status = status_of(project_dir, cli_env)
    assert status["status"] == "failed" and status["error"].startswith("OAuth failed: "), status
    assert "401" in status["error"] and "TaskGroup" not in status["error"]


def test_client_credentials_with_a_signed_jwt(
    start_server: Any, project_dir: Path, cli_env: dict[str, str], tmp_path: Path
) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = tmp_path / "robot.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    public = tmp_path / "robot.pub.pem"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    server = start_server("--machine-jwt", f"robot:{public}")
    oauth = {"grant": "client_credentials", "clientId": "robot", "privateKeyFile": str(private)}
    configure(project_dir, server.url, oauth=oauth)

    ran = call(project_dir, cli_env, "whoami")

    assert ran.returncode == 0, ran.stderr
    assert server.control("grants")["token_auth_private_key_jwt"] == 1
    status = status_of(project_dir, cli_env)
    assert status["status"] == "connected"


def test_mcp_auth_with_client_credentials_opens_no_browser(
    start_server: Any, project_dir: Path, cli_env: dict[str, str]
) -> None:
    server = start_server("--machine", "robot:r0b0t")
    configure(
        project_dir,
        server.url,
        oauth={"grant": "client_credentials", "clientId": "robot", "clientSecret": "r0b0t"},
    )

    out = run_opencode(project_dir, cli_env, "mcp", "auth", "secure")

    assert out.returncode == 0, out.stderr
    assert out.stdout == "signed in to secure with its client credentials (2 tools)\n"
    assert "http" not in out.stdout  # no URL to open
    assert json.loads(credentials_file(cli_env).read_text())["secure"]["tokens"]["access_token"]
