"""The built-in ``webfetch`` tool (builtin-tools spec §10; test list "webfetch.test.ts" in §17).

Every fetch goes to a real HTTP server started by the test on 127.0.0.1 (see ``_local_http``).
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from _harness import Harness, Recorder
from _local_http import Handler, LocalServer, closed_port, reply, stream

from opencode_cli import Project
from opencode_cli.context import AbortSignal
from opencode_cli.errors import AbortedError, DeniedError, InvalidArgumentsError, RejectedError
from opencode_cli.tools import webfetch as webfetch_module

MB5 = 5 * 1024 * 1024
BROWSER_AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/143.0.0.0 Safari/537.36"
)
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


# -- helpers -------------------------------------------------------------------------------------------


@pytest.fixture
def harness(project: Project) -> Harness:
    return Harness(project, "webfetch", env=True)


def page(body: bytes | str, content_type: str | None = "text/html; charset=utf-8", **extra: str) -> Any:
    headers = {"Content-Type": content_type} if content_type is not None else {}
    headers.update(extra)

    def handle(handler: Handler) -> None:
        reply(handler, 200, body, headers)

    return handle


def fetch(harness: Harness, url: str, **args: Any) -> Any:
    return harness.run({"url": url, **args})


# -- webfetch.test.ts ----------------------------------------------------------------------------------


def test_image_is_returned_as_an_attachment(harness: Harness, server: LocalServer) -> None:
    url = server.route("/image.png", page(PNG, "IMAGE/PNG; charset=binary"))
    result = fetch(harness, url)
    assert result.output == "Image fetched successfully"
    assert len(result.attachments) == 1
    attachment = result.attachments[0].as_dict()
    assert attachment.pop("id").startswith("prt_")  # given by the session when the call finishes
    assert attachment == {
        "type": "file",
        "mime": "image/png",
        "url": "data:image/png;base64," + base64.b64encode(PNG).decode(),
    }
    assert result.title == f"{url} (IMAGE/PNG; charset=binary)"


def test_svg_is_text_not_an_image(harness: Harness, server: LocalServer) -> None:
    svg = '<svg xmlns="http://www.w3.org/2000/svg"><circle r="4"/></svg>'
    url = server.route("/logo.svg", page(svg, "image/svg+xml"))
    result = fetch(harness, url, format="html")
    assert "<svg" in result.output
    assert result.attachments == []


def test_plain_text_as_text_is_returned_as_is(harness: Harness, server: LocalServer) -> None:
    url = server.route("/hello.txt", page("hello from webfetch", "text/plain; charset=utf-8"))
    assert fetch(harness, url, format="text").output == "hello from webfetch"


def test_html_as_text_leaves_out_styles_and_scripts(harness: Harness, server: LocalServer) -> None:
    html = (
        "<!doctype html><html><head><style>body { color: red }</style>"
        "<script>console.log('hidden')</script></head><body><p>Hello world</p></body></html>"
    )
    url = server.route("/page", page(html))
    assert fetch(harness, url, format="text").output == "Hello world"


# -- images ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mime", ["image/jpeg", "image/gif", "image/webp"])
def test_other_image_types_are_attachments(harness: Harness, server: LocalServer, mime: str) -> None:
    data = bytes(range(256))
    url = server.route("/img", page(data, mime))
    result = fetch(harness, url, format="text")
    assert result.output == "Image fetched successfully"
    assert result.attachments[0].url == f"data:{mime};base64," + base64.b64encode(data).decode()
    assert result.metadata == {"truncated": False}


def test_fastbidsheet_is_not_treated_as_an_image(harness: Harness, server: LocalServer) -> None:
    url = server.route("/sheet", page("sheet data", "image/vnd.fastbidsheet"))
    result = fetch(harness, url)
    assert result.output == "sheet data"
    assert result.attachments == []


# -- formats --------------------------------------------------------------------------------------------


ARTICLE = """<!DOCTYPE html>
<html><head><title>Guide</title><meta charset="utf-8"><link rel="stylesheet" href="x.css">
<style>h1 { font-size: 2em }</style><script>window.secret = "do not show"</script></head>
<body>
<h1>Main title</h1>
<h2>Section</h2>
<p>Some <em>emphasis</em>, some <strong>strength</strong> and <a href="https://example.com/">a link</a>.</p>
<hr>
<ul><li>first</li><li>second</li></ul>
<pre><code class="language-python">print("hi")
x = 1</code></pre>
</body></html>"""


def test_markdown_is_the_default_and_converts_html(harness: Harness, server: LocalServer) -> None:
    url = server.route("/article", page(ARTICLE))
    output = fetch(harness, url).output
    assert "# Main title" in output
    assert "## Section" in output
    assert "Some *emphasis*, some **strength** and [a link](https://example.com/)." in output
    assert "\n---\n" in output
    assert "- first\n- second" in output
    assert '```python\nprint("hi")\nx = 1\n```' in output
    assert "do not show" not in output
    assert "font-size" not in output
    assert "<" not in output
    assert output == output.strip()


def test_markdown_keeps_tables_and_drops_hidden_elements(harness: Harness, server: LocalServer) -> None:
    html = (
        "<body><table><tr><th>Name</th><th>Size</th></tr><tr><td>a.txt</td><td>3</td></tr></table>"
        "<div hidden>not shown</div><p style='display:none'>nor this</p><p>shown</p></body>"
    )
    url = server.route("/table", page(html))
    output = fetch(harness, url).output
    assert output.startswith("| Name  | Size |\n| ----- | ---- |\n| a.txt | 3    |")
    assert output.endswith("\n\nshown")
    assert "not shown" not in output and "nor this" not in output


def test_html_as_text_extracts_the_text_nodes(harness: Harness, server: LocalServer) -> None:
    url = server.route("/article", page(ARTICLE))
    output = fetch(harness, url, format="text").output
    assert output.startswith("Guide")
    assert "Main title" in output
    assert "Some emphasis, some strength and a link." in output
    assert 'print("hi")\nx = 1' in output
    assert "do not show" not in output
    assert "font-size" not in output


def test_text_skips_noscript_iframe_and_object(harness: Harness, server: LocalServer) -> None:
    html = (
        "<body>A<noscript>enable js</noscript>B<iframe>frame</iframe>C"
        "<object>obj</object>D &amp; E<embed src='x'>F</body>"
    )
    url = server.route("/p", page(html))
    assert fetch(harness, url, format="text").output == "ABCD & EF"


def test_html_format_returns_the_raw_body(harness: Harness, server: LocalServer) -> None:
    url = server.route("/article", page(ARTICLE))
    assert fetch(harness, url, format="html").output == ARTICLE


@pytest.mark.parametrize("format", ["markdown", "text", "html"])
@pytest.mark.parametrize("mime", ["text/plain", "text/markdown", "application/json"])
def test_content_that_is_not_html_is_returned_raw(
    harness: Harness, server: LocalServer, format: str, mime: str
) -> None:
    body = '# Title\n\n<b>not converted</b> {"a": 1}\n'
    url = server.route("/raw", page(body, mime))
    assert fetch(harness, url, format=format).output == body


def test_xhtml_is_not_converted(harness: Harness, server: LocalServer) -> None:
    """Only a content type containing ``text/html`` is converted, as upstream."""
    body = "<html><body><h1>x</h1></body></html>"
    url = server.route("/x", page(body, "application/xhtml+xml"))
    assert fetch(harness, url).output == body


def test_missing_content_type(harness: Harness, server: LocalServer) -> None:
    url = server.route("/none", page("<h1>raw</h1>", None))
    result = fetch(harness, url)
    assert result.output == "<h1>raw</h1>"
    assert result.title == f"{url} ()"


def test_title_names_the_url_and_the_content_type(harness: Harness, server: LocalServer) -> None:
    url = server.route("/t", page("x", "text/plain; charset=UTF-8"))
    result = fetch(harness, url)
    assert result.title == f"{url} (text/plain; charset=UTF-8)"
    assert result.metadata == {"truncated": False}


def test_accept_header_follows_the_format(harness: Harness, server: LocalServer) -> None:
    url = server.route("/h", page("x", "text/plain"))
    for format in ("markdown", "text", "html"):
        fetch(harness, url, format=format)
    accepts = [seen.headers["accept"] for seen in server.requests]
    assert accepts == [
        "text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, text/html;q=0.7, */*;q=0.1",
        "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1",
        "text/html;q=1.0, application/xhtml+xml;q=0.9, text/plain;q=0.8, text/markdown;q=0.7, */*;q=0.1",
    ]
    for seen in server.requests:
        assert seen.method == "GET"
        assert seen.headers["user-agent"] == BROWSER_AGENT
        assert seen.headers["accept-language"] == "en-US,en;q=0.9"


# -- character sets ----------------------------------------------------------------------------------


def test_declared_latin1_charset_is_honoured(harness: Harness, server: LocalServer) -> None:
    """Upstream always decodes UTF-8 (giving U+FFFD here); we honour the declared charset."""
    body = "<p>café crème à la carte</p>".encode("iso-8859-1")
    url = server.route("/latin1", page(body, "text/html; charset=ISO-8859-1"))
    assert fetch(harness, url, format="text").output == "café crème à la carte"


def test_latin1_label_is_read_as_windows_1252(harness: Harness, server: LocalServer) -> None:
    body = "“quoted” – €5".encode("cp1252")
    url = server.route("/w", page(body, "text/plain; charset=iso-8859-1"))
    assert fetch(harness, url).output == "“quoted” – €5"


def test_other_declared_charsets(harness: Harness, server: LocalServer) -> None:
    url = server.route(
        "/sjis", page("日本語のテキスト".encode("shift_jis"), 'text/plain; charset="Shift_JIS"')
    )
    assert fetch(harness, url).output == "日本語のテキスト"
    url = server.route("/koi8", page("привет".encode("koi8-r"), "text/plain;charset=koi8-r"))
    assert fetch(harness, url).output == "привет"


def test_without_a_charset_the_body_is_utf8(harness: Harness, server: LocalServer) -> None:
    url = server.route("/u", page("naïve — ok".encode(), "text/plain"))
    assert fetch(harness, url).output == "naïve — ok"


def test_undecodable_bytes_become_replacement_characters(harness: Harness, server: LocalServer) -> None:
    url = server.route("/bad", page(b"caf\xe9 ok", "text/plain"))
    assert fetch(harness, url).output == "caf\ufffd ok"


def test_unknown_charset_falls_back_to_utf8(harness: Harness, server: LocalServer) -> None:
    url = server.route("/unknown", page("héllo".encode(), "text/plain; charset=x-made-up"))
    assert fetch(harness, url).output == "héllo"


def test_utf8_bom_is_dropped(harness: Harness, server: LocalServer) -> None:
    url = server.route("/bom", page(b"\xef\xbb\xbfhello", "text/plain; charset=utf-8"))
    assert fetch(harness, url).output == "hello"


# -- redirects ------------------------------------------------------------------------------------------


def redirect(location: str, status: int = 302) -> Any:
    def handle(handler: Handler) -> None:
        reply(handler, status, b"", {"Location": location})

    return handle


def test_redirects_are_followed(harness: Harness, server: LocalServer) -> None:
    server.route("/final", page("arrived", "text/plain"))
    server.route("/b", redirect("/final", 307))
    start = server.route("/a", redirect(server.url("/b"), 301))
    result = fetch(harness, start)
    assert result.output == "arrived"
    assert result.title == f"{start} (text/plain)"
    assert [seen.path for seen in server.requests] == ["/a", "/b", "/final"]
    assert [r.patterns for r in harness.requests] == [[start]]


def test_relative_redirect(harness: Harness, server: LocalServer) -> None:
    server.route("/docs/page", page("relative ok", "text/plain"))
    start = server.route("/docs/", redirect("page", 303))
    assert fetch(harness, start).output == "relative ok"


def test_redirect_loop_fails(harness: Harness, server: LocalServer) -> None:
    start = server.route("/loop", redirect("/loop"))
    message = harness.error({"url": start})
    assert message == f"Too many redirects while fetching {start}"


def test_redirect_to_another_scheme_fails(harness: Harness, server: LocalServer) -> None:
    start = server.route("/ftp", redirect("ftp://127.0.0.1/file"))
    message = harness.error({"url": start})
    assert message.startswith(f"Cannot fetch {start}: a redirect led to an unsupported URL")


# -- status codes and the Cloudflare retry -------------------------------------------------------------


@pytest.mark.parametrize("status", [304, 404, 500])
def test_non_2xx_fails(harness: Harness, server: LocalServer, status: int) -> None:
    def handle(handler: Handler) -> None:
        reply(handler, status, b"nope", {"Content-Type": "text/plain"})

    url = server.route("/status", handle)
    assert harness.error({"url": url}) == f"StatusCode: non 2xx status code ({status} GET {url})"


def test_non_2xx_names_the_status_method_and_url(harness: Harness, server: LocalServer) -> None:
    url = server.url("/missing")  # no route: the server answers 404
    assert url.startswith("http://127.0.0.1:")
    assert harness.error({"url": url}) == f"StatusCode: non 2xx status code (404 GET {url})"


def test_non_2xx_after_a_redirect_names_the_url_requested(harness: Harness, server: LocalServer) -> None:
    start = server.route("/moved", redirect(server.url("/gone")))
    assert harness.error({"url": start}) == f"StatusCode: non 2xx status code (404 GET {start})"
    assert [seen.path for seen in server.requests] == ["/moved", "/gone"]


def test_non_2xx_keeps_the_query_of_the_url(harness: Harness, server: LocalServer) -> None:
    url = server.url("/missing") + "?q=1&r=two"
    assert harness.error({"url": url}) == f"StatusCode: non 2xx status code (404 GET {url})"


def cloudflare(passes_with: str | None) -> Any:
    def handle(handler: Handler) -> None:
        if passes_with is not None and handler.headers.get("User-Agent") == passes_with:
            reply(handler, 200, b"welcome, honest agent", {"Content-Type": "text/plain"})
        else:
            reply(handler, 403, b"challenge", {"Content-Type": "text/html", "cf-mitigated": "challenge"})

    return handle


def test_cloudflare_challenge_is_retried_with_an_honest_agent(harness: Harness, server: LocalServer) -> None:
    url = server.route("/cf", cloudflare("opencode"))
    assert fetch(harness, url).output == "welcome, honest agent"
    assert [seen.headers["user-agent"] for seen in server.requests] == [BROWSER_AGENT, "opencode"]
    assert server.requests[1].headers["accept"] == server.requests[0].headers["accept"]


def test_cloudflare_retry_happens_once(harness: Harness, server: LocalServer) -> None:
    url = server.route("/cf", cloudflare(None))
    assert harness.error({"url": url}) == f"StatusCode: non 2xx status code (403 GET {url})"
    assert len(server.requests) == 2


def test_plain_403_is_not_retried(harness: Harness, server: LocalServer) -> None:
    def handle(handler: Handler) -> None:
        reply(handler, 403, b"forbidden")

    url = server.route("/403", handle)
    assert harness.error({"url": url}) == f"StatusCode: non 2xx status code (403 GET {url})"
    assert len(server.requests) == 1


# -- the 5 MB cap ---------------------------------------------------------------------------------------


def test_announced_length_over_the_cap_fails_before_the_body(harness: Harness, server: LocalServer) -> None:
    """The header alone decides: the server announces 6 MB, sends a little and stalls."""

    def handle(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.send_header("Content-Length", str(6 * 1024 * 1024))
        handler.end_headers()
        handler.wfile.write(b"x" * 1000)
        handler.wfile.flush()
        server.release.wait(600)  # until the server stops: never, within the test

    url = server.route("/big", handle)
    assert harness.error({"url": url, "timeout": 5}) == "Response too large (exceeds 5MB limit)"


def test_body_without_length_is_cut_at_the_cap(harness: Harness, server: LocalServer) -> None:
    """No Content-Length, and a body that would never end: the count while streaming stops it."""
    sent = []

    def endless() -> Any:
        chunk = b"y" * 65536
        while not server.release.is_set():
            sent.append(len(chunk))
            yield chunk

    url = server.route("/endless", lambda h: stream(h, endless(), {"Content-Type": "text/plain"}))
    assert harness.error({"url": url, "timeout": 20}) == "Response too large (exceeds 5MB limit)"
    assert sum(sent) < 64 * 1024 * 1024


def test_chunked_body_over_the_cap(harness: Harness, server: LocalServer) -> None:
    chunks = [b"z" * 1024 * 1024] * 6
    url = server.route("/chunked", lambda h: stream(h, chunks, {"Content-Type": "text/plain"}, chunked=True))
    assert harness.error({"url": url}) == "Response too large (exceeds 5MB limit)"


def test_compressed_body_is_counted_decompressed(harness: Harness, server: LocalServer) -> None:
    packed = gzip.compress(b"0" * (MB5 + 1))
    url = server.route("/gz", page(packed, "text/plain", **{"Content-Encoding": "gzip"}))
    assert len(packed) < MB5
    assert harness.error({"url": url}) == "Response too large (exceeds 5MB limit)"


def test_body_of_exactly_five_megabytes_is_accepted(harness: Harness, server: LocalServer) -> None:
    url = server.route("/limit", page(b"a" * MB5, "text/plain"))
    result = fetch(harness, url)
    assert result.metadata["truncated"] is True  # then the generic 50 KiB truncation applies
    assert Path(result.metadata["outputPath"]).stat().st_size == MB5


def test_chunked_body_under_the_cap(harness: Harness, server: LocalServer) -> None:
    chunks = [b"line\n" * 10] * 3
    url = server.route("/ok", lambda h: stream(h, chunks, {"Content-Type": "text/plain"}, chunked=True))
    assert fetch(harness, url).output == "line\n" * 30


def test_long_output_gets_the_generic_truncation(harness: Harness, server: LocalServer) -> None:
    body = "".join(f"line {n}\n" for n in range(5000))
    url = server.route("/long", page(body, "text/plain"))
    result = fetch(harness, url)
    assert result.metadata["truncated"] is True
    assert re.search(r"\n\n\.\.\.\d+ lines truncated\.\.\.\n\n", result.output)
    assert Path(result.metadata["outputPath"]).read_text() == body


# -- timeouts -------------------------------------------------------------------------------------------


def test_slow_headers_hit_the_timeout(harness: Harness, server: LocalServer) -> None:
    def handle(handler: Handler) -> None:
        server.release.wait(600)  # until the server stops: never, within the test
        reply(handler, 200, b"too late")

    url = server.route("/slow", handle)
    assert harness.error({"url": url, "timeout": 0.5}) == "Request timed out"


def test_slow_body_hits_the_timeout(harness: Harness, server: LocalServer) -> None:
    """The timeout covers the body too (upstream's covers connect and headers only)."""

    def drip() -> Any:
        while not server.release.wait(0.1):
            yield b"."

    url = server.route("/drip", lambda h: stream(h, drip(), {"Content-Type": "text/plain"}))
    assert harness.error({"url": url, "timeout": 0.6}) == "Request timed out"


def test_fast_server_within_a_short_timeout(harness: Harness, server: LocalServer) -> None:
    url = server.route("/fast", page("quick", "text/plain"))
    assert fetch(harness, url, timeout=2).output == "quick"


def test_non_positive_timeout_times_out_at_once(harness: Harness, server: LocalServer) -> None:
    url = server.route("/never", page("x", "text/plain"))
    assert harness.error({"url": url, "timeout": 0}) == "Request timed out"
    assert server.requests == []


def test_timeout_defaults_to_30_and_is_capped_at_120() -> None:
    assert webfetch_module.effective_timeout(None) == 30
    assert webfetch_module.effective_timeout(5) == 5
    assert webfetch_module.effective_timeout(0.25) == 0.25
    assert webfetch_module.effective_timeout(120) == 120
    assert webfetch_module.effective_timeout(500) == 120


def test_abort_stops_a_slow_fetch(harness: Harness, server: LocalServer) -> None:
    def handle(handler: Handler) -> None:
        server.release.wait(600)  # until the server stops: never, within the test

    url = server.route("/hang", handle)
    abort = AbortSignal()
    threading.Timer(0.3, abort.abort).start()
    with pytest.raises(AbortedError):
        harness.run({"url": url}, abort=abort)


# -- URLs -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url", ["ftp://example.com/file", "example.com", "//example.com", "HTTP://EXAMPLE.COM", " https://x.y/"]
)
def test_url_must_start_with_http_or_https(harness: Harness, url: str) -> None:
    assert harness.error({"url": url}) == "URL must start with http:// or https://"
    assert harness.requests == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://", "no host"),
        ("https:///path", "no host"),
        ("http://exa mple.com/", "is not a valid host name"),
        ("http://127.0.0.1:99999/", "out of range"),
        ("http://[::1/", "Invalid IPv6 URL"),
    ],
)
def test_unfetchable_urls_fail_before_asking(harness: Harness, url: str, reason: str) -> None:
    message = harness.error({"url": url})
    assert message.startswith(f"Invalid URL: {url} (")
    assert reason in message
    assert harness.requests == []


def test_connection_refused(harness: Harness) -> None:
    url = f"http://127.0.0.1:{closed_port()}/x"
    assert harness.error({"url": url}).startswith(f"Failed to fetch {url}: ")


def test_query_is_sent_and_fragment_is_not(harness: Harness, server: LocalServer) -> None:
    url = server.route("/q", page("query ok", "text/plain"))
    assert fetch(harness, url + "?a=1&b=two#frag").output == "query ok"
    assert server.requests[-1].path == "/q?a=1&b=two"
    assert webfetch_module.invalid_url_reason("http://[::1]:8080/") is None


# -- permission -----------------------------------------------------------------------------------------


def test_permission_is_asked_with_the_url(harness: Harness, server: LocalServer) -> None:
    url = server.route("/p", page("x", "text/plain"))
    fetch(harness, url)
    fetch(harness, url, format="html", timeout=12)
    first, second = harness.requests
    assert first.permission == "webfetch"
    assert first.patterns == [url]
    assert first.always == ["*"]
    assert first.metadata == {"url": url, "format": "markdown"}
    assert second.metadata == {"url": url, "format": "html", "timeout": 12}


def test_denied_url_is_never_fetched(make_project: Any, project_dir: Path, server: LocalServer) -> None:
    url = server.route("/secret", page("x", "text/plain"))
    (project_dir / "opencode.toml").write_text(f'[permission.webfetch]\n"{server.base}/*" = "deny"\n')
    with pytest.raises(DeniedError):
        make_project().run_tool("webfetch", {"url": url}, prompt=Recorder())
    assert server.requests == []


def test_rejected_ask_fetches_nothing(make_project: Any, project_dir: Path, server: LocalServer) -> None:
    url = server.route("/ask", page("x", "text/plain"))
    (project_dir / "opencode.toml").write_text('[permission]\nwebfetch = "ask"\n')
    prompt = Recorder("reject")
    with pytest.raises(RejectedError):
        make_project().run_tool("webfetch", {"url": url}, prompt=prompt)
    assert [(r.permission, r.patterns) for r in prompt.requests] == [("webfetch", [url])]
    assert server.requests == []


def test_approved_ask_fetches(make_project: Any, project_dir: Path, server: LocalServer) -> None:
    url = server.route("/ok", page("approved", "text/plain"))
    (project_dir / "opencode.toml").write_text('[permission]\nwebfetch = "ask"\n')
    prompt = Recorder("once")
    result = make_project().run_tool("webfetch", {"url": url}, prompt=prompt)
    assert result.output == "approved"
    assert len(prompt.requests) == 1


# -- parameters -----------------------------------------------------------------------------------------


def test_schema(project: Project) -> None:
    schema = project.registry.get("webfetch").tool.load().schema()
    properties = schema["properties"]
    assert schema["required"] == ["url"]
    assert properties["url"]["type"] == "string"
    assert {k: v for k, v in properties["format"].items() if k != "description"} == {
        "type": "string",
        "enum": ["text", "markdown", "html"],
        "default": "markdown",
    }
    assert "anyOf" not in properties["format"]
    assert properties["timeout"]["type"] == "number"
    assert "anyOf" not in properties["timeout"]


def test_format_defaults_to_markdown(harness: Harness) -> None:
    tool = harness.tool
    assert tool.validate({"url": "https://x.y"}).format == "markdown"
    assert tool.validate({"url": "https://x.y", "format": None}).format == "markdown"
    assert tool.validate({"url": "https://x.y", "extra": 1}).format == "markdown"


@pytest.mark.parametrize(
    "args",
    [{}, {"url": 5}, {"url": "https://x.y", "format": "pdf"}, {"url": "https://x.y", "timeout": "5"}],
)
def test_invalid_arguments(harness: Harness, args: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        harness.tool.validate(args)
    assert "The webfetch tool was called with invalid arguments" in str(caught.value)


# -- network hygiene ------------------------------------------------------------------------------------


def test_process_proxy_and_netrc_are_not_used(
    harness: Harness, server: LocalServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The process environment is not read: a proxy there (pointing nowhere) changes nothing."""
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.setenv("ALL_PROXY", f"http://127.0.0.1:{closed_port()}")
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login user password secret\n")
    monkeypatch.setenv("NETRC", str(netrc))
    url = server.route("/direct", page("direct", "text/plain"))
    assert fetch(harness, url).output == "direct"
    assert "authorization" not in server.requests[0].headers


def test_proxy_from_the_context_environment(harness: Harness, server: LocalServer, project: Project) -> None:
    """A proxy named in the tool's environment gets the request (in absolute form)."""
    target = "http://site.invalid/page"
    server.route(target, page("via proxy", "text/plain"))
    env = {**project.env, "HTTP_PROXY": server.base}
    assert harness.run({"url": target}, env=env).output == "via proxy"
    assert server.requests[0].path == target
    env["NO_PROXY"] = "site.invalid"
    assert harness.error({"url": target}, env=env).startswith(f"Failed to fetch {target}: ")


def test_no_proxy_sends_local_addresses_direct(
    harness: Harness, server: LocalServer, project: Project
) -> None:
    url = server.route("/local", page("direct", "text/plain"))
    env = {
        **project.env,
        "HTTP_PROXY": f"http://127.0.0.1:{closed_port()}",
        "NO_PROXY": "localhost,127.0.0.1",
    }
    assert harness.run({"url": url}, env=env).output == "direct"


# -- registration ---------------------------------------------------------------------------------------


def test_registered_after_write(project: Project) -> None:
    ids = [entry.id for entry in project.registry.all()]
    assert ids.index("write") < ids.index("webfetch") < ids.index("websearch") < ids.index("apply_patch")
    assert project.registry.get("webfetch").source.kind == "builtin"


def test_listing_imports_neither_the_tool_nor_its_libraries(project_dir: Path, env: dict[str, str]) -> None:
    code = (
        "import sys, json\n"
        "from opencode_cli import Project\n"
        f"p = Project({str(project_dir)!r}, autoload_plugins=False)\n"
        "text = {t.id: t.description for t in p.tools()}\n"
        "assert 'webfetch' in text and 'websearch' in text\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('httpx', 'httpcore', 'html_to_markdown') or m.startswith('opencode_cli.tools.web'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout) == []


def test_cli_run(server: LocalServer, project_dir: Path, env: dict[str, str]) -> None:
    """``opencode tools run webfetch`` end to end, in a subprocess."""
    url = server.route("/cli", page("<h1>From the CLI</h1><p>It <em>works</em>.</p>"))
    done = subprocess.run(
        [sys.executable, "-m", "opencode_cli", "tools", "run", "-y", "--json", "webfetch", f"url={url}"],
        cwd=project_dir,
        env={**env, "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["output"] == "# From the CLI\n\nIt *works*."
    assert result["title"] == f"{url} (text/html; charset=utf-8)"
