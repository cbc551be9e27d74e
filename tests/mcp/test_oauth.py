"""Remote MCP servers behind OAuth 2.1, end to end: a real authorization server and protected MCP server
(``servers/oauth_server.py``, the SDK's server auth pieces) on 127.0.0.1, the CLI as real processes, the
browser step done by following the printed URL with httpx."""

from __future__ import annotations

import json
import queue
import re
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import tomli_w
from _mcp_servers import SERVERS, STARTUP_TIMEOUT, free_port, start, stop, wait_listening
from _processes import run_opencode
from hypothesis import given
from hypothesis import strategies as st

from opencode_cli.errors import ConfigError
from opencode_cli.mcp.config import servers as parse_servers
from opencode_cli.project import Project

OAUTH_SERVER = SERVERS / "oauth_server.py"
#: Generous bound on every wait for an event (a line, an exit); never a measured duration.
WAIT = 60.0


@dataclass
class OAuthServer:
    """The running authorization server (``issuer``) and protected MCP server (``url``)."""

    issuer: str
    url: str
    process: subprocess.Popen[bytes]

    def control(self, what: str) -> Any:
        method = "GET" if what == "grants" else "POST"
        return httpx.request(method, f"{self.issuer}/test/{what}", timeout=WAIT).json()


def _start_oauth_server(log: Path, *args: str) -> OAuthServer:
    process = start([sys.executable, str(OAUTH_SERVER), *args], log)
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while not (found := re.search(r"^READY (\d+) (\d+)$", log.read_text(errors="replace"), re.MULTILINE)):
        if process.poll() is not None or time.monotonic() > deadline:
            stop(process)
            pytest.fail(f"the OAuth server did not start:\n{log.read_text(errors='replace')}")
        time.sleep(0.05)
    auth_port, resource_port = int(found.group(1)), int(found.group(2))
    wait_listening(process, resource_port, log)
    return OAuthServer(f"http://127.0.0.1:{auth_port}", f"http://127.0.0.1:{resource_port}/mcp", process)


@pytest.fixture
def callback_port() -> int:
    return free_port()


@pytest.fixture
def oauth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OAuthServer]:
    """A fresh OAuth-protected MCP server; stopped (and checked gone) at teardown."""
    server = _start_oauth_server(tmp_path_factory.mktemp("oauth") / "server.log")
    try:
        yield server
    finally:
        stop(server.process)


@pytest.fixture
def cli_env(env: dict[str, str]) -> dict[str, str]:
    return {**env, "OPENCODE_NO_BROWSER": "1"}


def configure(project_dir: Path, url: str, **extra: Any) -> None:
    table = {"type": "remote", "url": url, **extra}
    (project_dir / "opencode.toml").write_text(tomli_w.dumps({"mcp": {"secure": table}}))


def credentials_file(env: dict[str, str]) -> Path:
    return Path(env["XDG_DATA_HOME"]) / "opencode" / "mcp-auth.json"


@dataclass
class SignIn:
    """What ``opencode mcp auth`` did: the URL it printed, what the browser saw, how it ended."""

    url: str
    browser: httpx.Response
    returncode: int
    stdout: str
    stderr: str


def run_sign_in(project_dir: Path, env: dict[str, str], port: int) -> SignIn:
    """``opencode mcp auth secure`` as a real process, the browser step done by following the URL it
    prints with httpx (the authorization server approves at once, or refuses with ``--deny``)."""
    script = Path(sys.executable).parent / "opencode"
    process = subprocess.Popen(
        [str(script), "mcp", "auth", "secure", "--callback-port", str(port)],
        cwd=project_dir,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    output: list[str] = []
    try:
        while (line := lines.get(timeout=WAIT)) is not None:
            output.append(line)
            if line.startswith("http"):
                break
        else:
            process.wait(WAIT)
            pytest.fail(f"mcp auth ended without a URL: {''.join(output)}{process.stderr.read()}")  # type: ignore[union-attr]
        url = output[-1].strip()
        browser = httpx.get(url, follow_redirects=True, timeout=WAIT)
        process.wait(WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    reader.join(WAIT)
    while (line := lines.get_nowait()) is not None:
        output.append(line)
    stderr = process.stderr.read() if process.stderr else ""
    return SignIn(url, browser, process.returncode, "".join(output), stderr)


def sign_in(project_dir: Path, env: dict[str, str], port: int) -> SignIn:
    """:func:`run_sign_in`, asserting it signed in."""
    done = run_sign_in(project_dir, env, port)
    assert done.browser.status_code == 200 and "Signed in to secure" in done.browser.text, done.browser.text
    assert done.returncode == 0, done.stderr
    return done


def expire_locally(env: dict[str, str]) -> None:
    """The client's clock passes the access token's expiry (the stored expiry moves into the past)."""
    path = credentials_file(env)
    data = json.loads(path.read_text())
    data["secure"]["expiresAt"] = time.time() - 60
    path.write_text(json.dumps(data))
    path.chmod(0o600)


def status_of(project_dir: Path, env: dict[str, str]) -> dict[str, Any]:
    listed = run_opencode(project_dir, env, "mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [server] = json.loads(listed.stdout)["servers"]
    return server


# -- tests ---------------------------------------------------------------------------------------------


def test_an_unauthenticated_server_needs_authentication_and_its_tools_are_absent(
    oauth_server: OAuthServer,
    project_dir: Path,
    make_project: Callable[..., Project],
    cli_env: dict[str, str],
) -> None:
    configure(project_dir, oauth_server.url)
    project = make_project()

    async def main() -> Any:
        async with project:
            await project.open()
            return project.generation.offer(), project.mcp.statuses()

    import asyncio

    offer, [status] = asyncio.run(asyncio.wait_for(main(), WAIT))
    assert status.status == "needs authentication"
    assert "opencode mcp auth secure" in (status.error or "")
    ids = set(offer.ids())
    assert "read" in ids and not any(tool_id.startswith("secure_") for tool_id in ids)

    listed = run_opencode(project_dir, cli_env, "mcp", "list")
    assert listed.returncode == 0
    assert "needs authentication" in listed.stdout and "opencode mcp auth secure" in listed.stdout
    assert "Traceback" not in listed.stderr
    ran = run_opencode(project_dir, cli_env, "tools", "run", "secure_whoami", "--yes")
    assert ran.returncode == 2 and "Traceback" not in ran.stderr
    assert oauth_server.control("grants") == {}  # nothing was registered on the way
    assert not credentials_file(cli_env).exists()


def test_mcp_auth_signs_in_with_pkce_and_the_tools_are_listed_and_called(
    oauth_server: OAuthServer, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    configure(project_dir, oauth_server.url)
    done = sign_in(project_dir, cli_env, callback_port)
    url, output = done.url, done.stdout

    assert url.startswith(f"{oauth_server.issuer}/authorize?")
    assert "code_challenge_method=S256" in url and "code_challenge=" in url
    assert f"redirect_uri=http%3A%2F%2F127.0.0.1%3A{callback_port}%2Fmcp%2Foauth%2Fcallback" in url
    assert "signed in to secure (2 tools)" in output
    assert oauth_server.control("grants") == {"registration": 1, "authorization_code": 1}  # RFC 7591
    with pytest.raises(OSError):  # the callback server is gone with the command
        socket.create_connection(("127.0.0.1", callback_port), timeout=2).close()

    stored = credentials_file(cli_env)
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert [path.name for path in stored.parent.iterdir() if path.name.endswith(".tmp")] == []
    entry = json.loads(stored.read_text())["secure"]
    assert entry["serverUrl"] == oauth_server.url and entry["tokens"]["refresh_token"]

    status = status_of(project_dir, cli_env)
    assert (status["status"], status["tools"]) == ("connected", 2)
    ran = run_opencode(project_dir, cli_env, "tools", "run", "secure_whoami", "--yes")
    assert ran.returncode == 0 and ran.stdout == "signed in as tester\n", ran.stderr
    listed = run_opencode(project_dir, cli_env, "mcp", "auth", "--list")
    assert re.search(r"^secure\s+signed in\s+http", listed.stdout, re.MULTILINE), listed.stdout


def test_an_expired_token_is_refreshed_silently(
    oauth_server: OAuthServer, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    configure(project_dir, oauth_server.url)
    sign_in(project_dir, cli_env, callback_port)
    before = json.loads(credentials_file(cli_env).read_text())["secure"]["tokens"]
    oauth_server.control("expire")  # the server no longer takes the access token…
    expire_locally(cli_env)  # …and the client knows it expired

    ran = run_opencode(project_dir, cli_env, "tools", "run", "secure_echo", "text=again", "--yes")

    assert ran.returncode == 0 and ran.stdout == "again\n", ran.stderr
    assert oauth_server.control("grants")["refresh_token"] == 1
    after = json.loads(credentials_file(cli_env).read_text())["secure"]
    assert after["tokens"]["access_token"] != before["access_token"]
    assert after["expiresAt"] > time.time()
    assert stat.S_IMODE(credentials_file(cli_env).stat().st_mode) == 0o600


def test_a_token_the_server_expires_early_is_refreshed_silently(
    oauth_server: OAuthServer, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    configure(project_dir, oauth_server.url)
    sign_in(project_dir, cli_env, callback_port)
    oauth_server.control("expire")  # the client still thinks the token is good

    ran = run_opencode(project_dir, cli_env, "tools", "run", "secure_echo", "text=early", "--yes")

    assert ran.returncode == 0 and ran.stdout == "early\n", ran.stderr
    assert oauth_server.control("grants")["refresh_token"] == 1


def test_a_token_revoked_during_a_session_is_reported_and_needs_authentication(
    oauth_server: OAuthServer,
    project_dir: Path,
    cli_env: dict[str, str],
    callback_port: int,
    make_project: Callable[..., Project],
) -> None:
    import asyncio

    from opencode_cli.session import Decision, ToolCall

    configure(project_dir, oauth_server.url)
    sign_in(project_dir, cli_env, callback_port)
    project = make_project()

    async def allow(request: Any) -> Decision:
        return Decision("once")

    async def main() -> Any:
        async with project:
            await project.open()
            async with project.session("build", prompt=allow) as session:
                session.resolve()
                first = await session.dispatch(ToolCall("secure_echo", {"text": "one"}))
                await asyncio.to_thread(oauth_server.control, "revoke")
                second = await session.dispatch(ToolCall("secure_echo", {"text": "two"}))
                return first, second, project.mcp.statuses()

    first, second, [status] = asyncio.run(asyncio.wait_for(main(), WAIT))
    assert (first.status, first.output) == ("completed", "one")
    assert second.status == "error"
    assert 'MCP server "secure" needs authentication (run: opencode mcp auth secure)' in (second.error or "")
    assert status.status == "needs authentication"


def test_a_revoked_refresh_token_needs_authentication_again(
    oauth_server: OAuthServer, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    configure(project_dir, oauth_server.url)
    sign_in(project_dir, cli_env, callback_port)
    oauth_server.control("revoke")
    expire_locally(cli_env)

    listed = run_opencode(project_dir, cli_env, "mcp", "list", "--json")

    [status] = json.loads(listed.stdout)["servers"]
    assert status["status"] == "needs authentication" and status["tools"] == 0
    assert listed.stderr == ""  # the SDK's log of the refused refresh is not ours to print
    assert "refresh_token" not in oauth_server.control("grants")
    sign_in(project_dir, cli_env, free_port())  # signing in again mends it…
    assert status_of(project_dir, cli_env)["status"] == "connected"
    assert oauth_server.control("grants")["registration"] == 2  # …registered for the new redirect URI


def test_logout_removes_the_credentials(
    oauth_server: OAuthServer, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    configure(project_dir, oauth_server.url)
    sign_in(project_dir, cli_env, callback_port)

    out = run_opencode(project_dir, cli_env, "mcp", "logout", "secure")

    assert out.returncode == 0 and "signed out of secure" in out.stdout
    assert "secure" not in json.loads(credentials_file(cli_env).read_text())
    assert status_of(project_dir, cli_env)["status"] == "needs authentication"
    listed = run_opencode(project_dir, cli_env, "mcp", "auth", "--list", "--json")
    assert [row["state"] for row in json.loads(listed.stdout)["servers"]] == ["not signed in"]
    again = run_opencode(project_dir, cli_env, "mcp", "logout", "secure")
    assert again.returncode == 0 and "not signed in to secure" in again.stderr


def test_a_configured_client_id_is_used_without_registration(
    tmp_path_factory: pytest.TempPathFactory, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    redirect = f"http://127.0.0.1:{callback_port}/mcp/oauth/callback"
    server = _start_oauth_server(
        tmp_path_factory.mktemp("oauth") / "server.log", "--client", f"opencode-test:s3cret:{redirect}"
    )
    try:
        configure(project_dir, server.url, oauth={"clientId": "opencode-test", "clientSecret": "s3cret"})
        url = sign_in(project_dir, cli_env, callback_port).url
        assert "client_id=opencode-test" in url
        assert server.control("grants") == {"authorization_code": 1}
        assert "clientInfo" not in json.loads(credentials_file(cli_env).read_text())["secure"]
        assert status_of(project_dir, cli_env)["status"] == "connected"
    finally:
        stop(server.process)


def test_a_refused_authorization_is_a_clear_error(
    tmp_path_factory: pytest.TempPathFactory, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    server = _start_oauth_server(tmp_path_factory.mktemp("oauth") / "server.log", "--deny")
    try:
        configure(project_dir, server.url)
        done = run_sign_in(project_dir, cli_env, callback_port)
    finally:
        stop(server.process)
    assert done.browser.status_code == 400 and "access_denied" in done.browser.text
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "sign-in to secure failed: the authorization server refused: access_denied" in done.stderr
    assert "tokens" not in json.loads(credentials_file(cli_env).read_text()).get("secure", {})


def test_the_configured_scope_is_asked_for_when_the_server_names_none(
    tmp_path_factory: pytest.TempPathFactory, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    server = _start_oauth_server(tmp_path_factory.mktemp("oauth") / "server.log", "--no-scopes")
    try:
        configure(project_dir, server.url, oauth={"scope": "issues:read"})
        done = sign_in(project_dir, cli_env, callback_port)
        assert "scope=issues%3Aread" in done.url
        assert status_of(project_dir, cli_env)["status"] == "connected"
    finally:
        stop(server.process)


def test_signing_in_to_a_server_without_oauth_says_so(
    demo_http_server: str, project_dir: Path, cli_env: dict[str, str], callback_port: int
) -> None:
    configure(project_dir, demo_http_server)
    out = run_opencode(project_dir, cli_env, "mcp", "auth", "secure", "--callback-port", str(callback_port))
    assert out.returncode == 1 and "did not ask to sign in" in out.stderr, out.stderr
    assert status_of(project_dir, cli_env)["status"] == "connected"  # oauth on, never asked: plain HTTP


def test_oauth_false_leaves_a_401_a_plain_failure(
    oauth_server: OAuthServer, project_dir: Path, cli_env: dict[str, str]
) -> None:
    configure(project_dir, oauth_server.url, oauth=False)
    status = status_of(project_dir, cli_env)
    assert status["status"] == "failed"
    signed = run_opencode(project_dir, cli_env, "mcp", "auth", "secure")
    assert signed.returncode == 2 and "oauth = false" in signed.stderr


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_sign_in_stops_its_callback_server(
    oauth_server: OAuthServer,
    project_dir: Path,
    cli_env: dict[str, str],
    callback_port: int,
    sig: signal.Signals,
    code: int,
) -> None:
    configure(project_dir, oauth_server.url)
    script = Path(sys.executable).parent / "opencode"
    process = subprocess.Popen(
        [str(script), "mcp", "auth", "secure", "--callback-port", str(callback_port)],
        cwd=project_dir,
        env=cli_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:  # the URL is printed: the callback server listens, the flow waits
            if line.startswith("http"):
                break
        socket.create_connection(("127.0.0.1", callback_port), timeout=WAIT).close()
        process.send_signal(sig)
        process.wait(WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stderr = process.stderr.read() if process.stderr else ""
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", callback_port), timeout=2).close()
    assert "tokens" not in json.loads(credentials_file(cli_env).read_text()).get("secure", {})


def test_a_busy_callback_port_is_a_clear_error(
    oauth_server: OAuthServer, project_dir: Path, cli_env: dict[str, str]
) -> None:
    configure(project_dir, oauth_server.url)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = run_opencode(project_dir, cli_env, "mcp", "auth", "secure", "--callback-port", str(port))
    assert out.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in out.stderr and "Traceback" not in out.stderr


def test_mcp_auth_of_an_unknown_or_local_server_is_a_usage_error(
    project_dir: Path, cli_env: dict[str, str]
) -> None:
    (project_dir / "opencode.toml").write_text(
        tomli_w.dumps({"mcp": {"here": {"type": "local", "command": ["true"]}}})
    )
    unknown = run_opencode(project_dir, cli_env, "mcp", "auth", "nope")
    local = run_opencode(project_dir, cli_env, "mcp", "auth", "here")
    assert unknown.returncode == 2 and "no MCP server 'nope'" in unknown.stderr
    assert local.returncode == 2 and "is local" in local.stderr


@pytest.mark.parametrize(
    ("oauth", "message"),
    [
        ("yes", "must be false or a table"),
        ({"clientID": "x"}, "unknown key 'mcp.secure.oauth.clientID'"),
        ({"clientSecret": "x"}, "needs mcp.secure.oauth.clientId"),
        ({"clientId": ""}, "must be a non-empty string"),
    ],
)
def test_a_bad_oauth_table_is_a_config_error(oauth: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_servers({"mcp": {"secure": {"type": "remote", "url": "http://x/mcp", "oauth": oauth}}})


def test_the_oauth_table_is_read_and_written_back() -> None:
    table = {"type": "remote", "url": "http://x/mcp", "oauth": {"clientId": "a", "scope": "read write"}}
    found, warnings = parse_servers({"mcp": {"secure": table}})
    server = found["secure"]
    assert (server.oauth.client_id, server.oauth.client_secret, server.oauth.scope) == (
        "a",
        None,
        "read write",
    )
    assert server.as_dict() == table and warnings == []
    off, _ = parse_servers({"mcp": {"secure": {"type": "remote", "url": "http://x/mcp", "oauth": False}}})
    assert off["secure"].as_dict()["oauth"] is False


def test_auth_list_shows_credentials_of_servers_no_longer_configured(
    project_dir: Path, cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from opencode_cli.mcp import credentials

    (project_dir / "opencode.toml").write_text(
        tomli_w.dumps({"mcp": {"docs": {"type": "remote", "url": "http://127.0.0.1:9/mcp"}}})
    )
    path = credentials_file(cli_env)
    tokens = {"access_token": "a", "refresh_token": "r", "token_type": "Bearer"}
    credentials.update("gone", "http://127.0.0.1:9/old", {"tokens": tokens, "expiresAt": None}, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    listed = run_opencode(project_dir, cli_env, "mcp", "auth", "--list")

    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^docs\s+not signed in\s+http://127.0.0.1:9/mcp$", listed.stdout, re.MULTILINE)
    assert "gone  signed in  http://127.0.0.1:9/old  (no longer configured" in listed.stdout
    out = run_opencode(project_dir, cli_env, "mcp", "logout", "gone")
    assert out.returncode == 0 and json.loads(path.read_text()) == {}


@given(
    client_id=st.none() | st.text(min_size=1),
    client_secret=st.none() | st.text(min_size=1),
    scope=st.none() | st.text(min_size=1),
)
def test_any_valid_oauth_table_round_trips(
    client_id: str | None, client_secret: str | None, scope: str | None
) -> None:
    oauth = {
        key: value
        for key, value in (("clientId", client_id), ("clientSecret", client_secret), ("scope", scope))
        if value is not None
    }
    table = {"type": "remote", "url": "https://example.com/mcp", **({"oauth": oauth} if oauth else {})}
    if client_secret is not None and client_id is None:
        with pytest.raises(ConfigError):
            parse_servers({"mcp": {"s": table}})
        return
    found, _ = parse_servers({"mcp": {"s": table}})
    assert found["s"].as_dict() == table
    assert (found["s"].oauth.client_id, found["s"].oauth.client_secret, found["s"].oauth.scope) == (
        client_id,
        client_secret,
        scope,
    )


@pytest.mark.parametrize(
    ("oauth", "message"),
    [
        ({"grant": "password"}, "grant must be one of authorization_code, client_credentials"),
        (
            {"grant": "client_credentials", "clientId": "a"},
            "needs clientId and clientSecret or privateKeyFile",
        ),
        ({"clientId": "a", "tokenEndpointAuthMethod": "tls"}, "tokenEndpointAuthMethod must be one of"),
        (
            {"clientId": "a", "tokenEndpointAuthMethod": "client_secret_basic"},
            "needs mcp.secure.oauth.clientSecret",
        ),
        ({"clientId": "a", "privateKeyFile": "k.pem"}, 'needs mcp.secure.oauth.grant = "client_credentials"'),
        (
            {"grant": "client_credentials", "clientId": "a", "clientSecret": "s", "privateKeyFile": "k.pem"},
            "leave out clientSecret",
        ),
    ],
)
def test_a_bad_machine_oauth_table_is_a_config_error(oauth: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_servers({"mcp": {"secure": {"type": "remote", "url": "http://x/mcp", "oauth": oauth}}})


def test_the_machine_oauth_tables_round_trip() -> None:
    for oauth in (
        {
            "grant": "client_credentials",
            "clientId": "a",
            "clientSecret": "s",
            "tokenEndpointAuthMethod": "client_secret_post",
        },
        {
            "grant": "client_credentials",
            "clientId": "a",
            "privateKeyFile": "~/k.pem",
            "issuer": "https://as.example",
        },
        {"clientId": "a", "clientSecret": "s", "tokenEndpointAuthMethod": "client_secret_basic"},
    ):
        table = {"type": "remote", "url": "http://x/mcp", "oauth": oauth}
        found, warnings = parse_servers({"mcp": {"secure": table}})
        assert found["secure"].as_dict() == table and warnings == []
    jwt = parse_servers({"mcp": {"s": {"type": "remote", "url": "http://x/mcp", "oauth": oauth}}})[0]["s"]
    assert jwt.oauth.auth_method == "client_secret_basic" and not jwt.oauth.machine


def test_the_token_endpoint_method_is_chosen_from_what_the_server_advertises() -> None:
    from mcp.shared.auth import OAuthMetadata

    from opencode_cli.mcp.oauth import choose_auth_method

    def metadata(methods: list[str] | None) -> OAuthMetadata:
        return OAuthMetadata.model_validate(
            {
                "issuer": "https://as.example",
                "authorization_endpoint": "https://as.example/authorize",
                "token_endpoint": "https://as.example/token",
                "response_types_supported": ["code"],
                "token_endpoint_auth_methods_supported": methods,
            }
        )

    assert (
        choose_auth_method(None, metadata(["client_secret_post", "client_secret_basic"]))
        == "client_secret_basic"
    )
    assert choose_auth_method(None, metadata(["client_secret_post"])) == "client_secret_post"
    assert choose_auth_method(None, metadata(None)) == "client_secret_basic"
    assert choose_auth_method(None, None) == "client_secret_basic"
    assert choose_auth_method("client_secret_post", metadata(["client_secret_basic"])) == "client_secret_post"
