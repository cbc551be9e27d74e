"""``webfetch``: fetch one URL and hand its content to the model as markdown, plain text or HTML.

After the scheme check the ``webfetch`` permission is asked with the URL as the pattern; nothing is
sent before it is granted, and nothing is contacted but that URL (and the places it redirects to), or
the proxy the tool context's environment names (see :mod:`opencode_cli.tools._http`).
HTML becomes markdown through ``html-to-markdown`` (ATX headings, ``-`` bullets, fenced code, ``*``
emphasis; ``script``/``style``/``meta``/``link`` removed) and plain text through the standard library's
HTML parser (text nodes joined, those inside ``script``, ``style``, ``noscript``, ``iframe`` and
``object`` skipped; ``embed`` is a void element, so it holds no text). Images come back as a ``data:``
URL attachment.

Deliberate differences from upstream (builtin-tools spec §10):

* the charset named in ``Content-Type`` is honoured (upstream always decodes UTF-8); without one, or
  with one Python does not know, the body is UTF-8. ``iso-8859-1``, ``latin1`` and ``us-ascii`` are
  read as windows-1252, as browsers do;
* the 5 MiB cap is enforced while the body streams in, so an endless body is cut off at the cap;
* the timeout covers the whole exchange (connect, headers *and* body), not just the headers; a timeout
  of zero or less fails at once with ``Request timed out``, as upstream's would;
* the markdown leaves out the document's ``<title>`` and elements marked hidden (``hidden``,
  ``display: none``), and converts tables (Turndown keeps the title text and hidden text, and leaves
  tables as plain text);
* a URL that cannot be fetched at all (no host, a bad port, spaces in the host) fails before the
  permission is asked, with ``Invalid URL: ...``.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import math
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, StrictFloat, field_validator

from ..context import ToolContext
from ..errors import ToolError, message_of
from ..results import Attachment, ToolResult
from ._arguments import Arguments

if TYPE_CHECKING:
    import httpx

MAX_RESPONSE_SIZE = 5 * 1024 * 1024
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 120.0

BAD_SCHEME = "URL must start with http:// or https://"
TIMED_OUT = "Request timed out"
TOO_LARGE = "Response too large (exceeds 5MB limit)"
IMAGE_FETCHED = "Image fetched successfully"

BROWSER_AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/143.0.0.0 Safari/537.36"
)
#: The user agent of the one retry after a Cloudflare challenge.
HONEST_AGENT = "opencode"
ACCEPT = {
    "markdown": "text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, text/html;q=0.7, */*;q=0.1",
    "text": "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1",
    "html": (
        "text/html;q=1.0, application/xhtml+xml;q=0.9, text/plain;q=0.8, text/markdown;q=0.7, */*;q=0.1"
    ),
}
NOT_IMAGES = frozenset({"image/svg+xml", "image/vnd.fastbidsheet"})
#: Labels that browsers decode as windows-1252 (WHATWG Encoding standard).
WINDOWS_1252 = frozenset(
    {"ascii", "us-ascii", "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "l1", "cp819", "ibm819"}
)

Format = Literal["text", "markdown", "html"]


class WebfetchParameters(Arguments):
    """Arguments of the webfetch tool."""

    url: str = Field(description="The address to fetch (http:// or https://)")
    format: Format = Field(
        "markdown",
        description="How to return the content: text, markdown or html. markdown when left out.",
    )
    timeout: StrictFloat | None = Field(
        None,
        allow_inf_nan=False,
        description="Seconds to wait for the response (at most 120; 30 when left out)",
    )

    @field_validator("format", mode="before")
    @classmethod
    def _absent_format(cls, value: Any) -> Any:
        """A ``null`` format is the default, as an ``undefined`` one is upstream."""
        return "markdown" if value is None else value


# -- helpers ---------------------------------------------------------------------------------------


def effective_timeout(timeout: float | None) -> float:
    """The timeout in seconds: the one asked for (30 when absent), never more than 120."""
    seconds = DEFAULT_TIMEOUT if timeout is None else timeout
    return seconds if seconds <= MAX_TIMEOUT else MAX_TIMEOUT  # NaN compares false: the maximum


_FORBIDDEN_HOST = frozenset(" \t\n\r#%/:<>?@[\\]^|\"'`{}")


def invalid_url_reason(url: str) -> str | None:
    """Why ``url`` (already known to start with a http(s) scheme) cannot be fetched, or ``None``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        return str(error)
    host = parts.hostname
    if not host:
        return "no host"
    if port == 0:
        return "port 0"
    if not parts.netloc.rpartition("@")[2].startswith("[") and (
        any(c in _FORBIDDEN_HOST or ord(c) < 0x20 or ord(c) == 0x7F for c in host)
    ):
        return f"the host {host!r} is not a valid host name"
    return None


def _content_length(value: str | None) -> int | None:
    """The ``Content-Length`` header as a number (its leading digits, like ``parseInt``)."""
    if not value:
        return None
    digits = ""
    for char in value.strip():
        if not char.isdigit():
            break
        digits += char
    return int(digits) if digits else None


def _charset(content_type: str) -> str | None:
    for part in content_type.split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip("\"'").lower() or None
    return None


def decode(body: bytes, content_type: str) -> str:
    """The body as text, in the charset ``content_type`` names (UTF-8 otherwise; a BOM is dropped)."""
    label = _charset(content_type)
    encoding = "utf-8"
    if label in WINDOWS_1252:
        encoding = "cp1252"
    elif label:
        try:
            encoding = codecs.lookup(label).name
        except LookupError:
            encoding = "utf-8"
    if encoding == "utf-8":
        encoding = "utf-8-sig"
    return body.decode(encoding, errors="replace")


_SKIPPED = frozenset({"script", "style", "noscript", "iframe", "object"})


class _TextExtractor(HTMLParser):
    """Joins the text nodes of a document, leaving out those inside non-content elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.depth += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if not self.depth:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """The text of an HTML document (scripts, styles and embedded objects left out), trimmed."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts).strip()


def html_to_markdown(html: str) -> str:
    """Markdown for an HTML document: ATX headings, ``-`` bullets, fenced code, ``*`` emphasis."""
    from html_to_markdown import ConversionOptions, convert

    options = ConversionOptions(
        extract_metadata=False,
        heading_style="atx",
        bullets="-",
        code_block_style="backticks",
        strong_em_symbol="*",
        exclude_selectors=["script", "style", "meta", "link"],
    )
    result = convert(html, options)
    return (result if isinstance(result, str) else result.content or "").strip()


# -- the request -----------------------------------------------------------------------------------


async def _read(response: httpx.Response) -> bytes:
    """The body, refused once it is over the cap (announced by ``Content-Length`` or counted)."""
    length = _content_length(response.headers.get("content-length"))
    if length is not None and length > MAX_RESPONSE_SIZE:
        raise ToolError(TOO_LARGE)
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_RESPONSE_SIZE:
            raise ToolError(TOO_LARGE)
    return bytes(body)


def status_error(status: int, method: str, url: str) -> str:
    """The text of a non-2xx answer, as Effect's ``filterStatusOk`` words it: the status, the method and the
    URL as the tool requested it (not where redirects led)."""
    return f"StatusCode: non 2xx status code ({status} {method} {url})"


async def _exchange(url: str, format: str, seconds: float, ctx: ToolContext) -> tuple[str, bytes]:
    """GET ``url`` (redirects followed, one retry after a Cloudflare challenge): content type and body."""
    from . import _http

    headers = {
        "User-Agent": BROWSER_AGENT,
        "Accept": ACCEPT[format],
        "Accept-Language": "en-US,en;q=0.9",
    }
    async with _http.client(ctx.env, seconds, follow_redirects=True) as client:
        response = await client.send(client.build_request("GET", url, headers=headers), stream=True)
        if response.status_code == 403 and response.headers.get("cf-mitigated") == "challenge":
            await response.aclose()
            retry = client.build_request("GET", url, headers={**headers, "User-Agent": HONEST_AGENT})
            response = await client.send(retry, stream=True)
        try:
            if not response.is_success:
                raise ToolError(status_error(response.status_code, "GET", url))
            body = await _read(response)
        finally:
            await response.aclose()
        return response.headers.get("content-type") or "", body


async def fetch(url: str, format: str, seconds: float, ctx: ToolContext) -> tuple[str, bytes]:
    """:func:`_exchange` within ``seconds``, with httpx's failures turned into model-facing errors."""
    import httpx

    if not seconds > 0:
        raise ToolError(TIMED_OUT)
    try:
        async with asyncio.timeout(seconds):
            return await _exchange(url, format, seconds, ctx)
    except (TimeoutError, httpx.TimeoutException):
        raise ToolError(TIMED_OUT) from None
    except httpx.TooManyRedirects:
        raise ToolError(f"Too many redirects while fetching {url}") from None
    except httpx.UnsupportedProtocol as error:
        raise ToolError(f"Cannot fetch {url}: a redirect led to an unsupported URL ({error})") from None
    except httpx.InvalidURL as error:
        raise ToolError(f"Invalid URL: {url} ({error})") from None
    except httpx.HTTPError as error:
        reason = message_of(error)
        raise ToolError(f"Failed to fetch {url}: {reason}") from None


async def execute(params: WebfetchParameters, ctx: ToolContext) -> ToolResult:
    """Fetch ``params.url`` and return it in ``params.format``."""
    url = params.url
    if not (url.startswith("http://") or url.startswith("https://")):
        raise ToolError(BAD_SCHEME)
    reason = invalid_url_reason(url)
    if reason is not None:
        raise ToolError(f"Invalid URL: {url} ({reason})")
    metadata: dict[str, Any] = {"url": url, "format": params.format}
    if params.timeout is not None:
        metadata["timeout"] = _number(params.timeout)
    await ctx.ask("webfetch", [url], always=["*"], metadata=metadata)

    content_type, body = await fetch(url, params.format, effective_timeout(params.timeout), ctx)
    mime = content_type.split(";")[0].strip().lower()
    title = f"{url} ({content_type})"
    if mime.startswith("image/") and mime not in NOT_IMAGES:
        data = base64.b64encode(body).decode("ascii")
        return ToolResult(
            output=IMAGE_FETCHED,
            title=title,
            metadata={},
            attachments=[Attachment(mime=mime, url=f"data:{mime};base64,{data}")],
        )
    text = decode(body, content_type)
    is_html = "text/html" in content_type.lower()
    if params.format == "markdown" and is_html:
        text = await asyncio.to_thread(html_to_markdown, text)
    elif params.format == "text" and is_html:
        text = await asyncio.to_thread(html_to_text, text)
    return ToolResult(output=text, title=title, metadata={})


def _number(value: float) -> float | int:
    """A JSON number as JavaScript writes it: ``5.0`` is ``5``."""
    return int(value) if math.isfinite(value) and value.is_integer() else value


def init() -> dict[str, Any]:
    """The tool's definition, built on first use."""
    return {"parameters": WebfetchParameters, "execute": execute}
