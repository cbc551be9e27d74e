"""One language server as a project service: a child process spoken to by pygls's language client.

:class:`LspClient` starts the server (through :func:`~opencode_cli.services.spawn`, so it has its own
process group and dies with us), runs ``initialize``/``initialized``, keeps the documents it opened in
sync (``didOpen`` once, then ``didChange`` with the whole text), remembers the diagnostics the server
pushes, and asks for them (``textDocument/diagnostic``) when the server offers that. ``stop()`` sends
``shutdown`` and ``exit`` within a short bound, then ends the process group.

Every request is bounded by ``request_timeout``; a server that exits fails the request waiting on it at
once, and the client is then ``lost``: the next call through :mod:`.servers` starts a new one. What a
server says for its user (``window/logMessage``, ``window/showMessage``) is logged at debug level.

pygls's :class:`~pygls.lsp.client.LanguageClient` is used through its public API only: its protocol
(requests, notifications and the handlers of ``feature``) over a writer given with ``set_writer`` and
read by :func:`pygls.io_.run_async`. The transport is ours: the process comes from
:func:`~opencode_cli.services.spawn` (its own process group, an owner that stops it), and this class
owns the reader's stop event and tasks. pygls and lsprotocol are imported by :meth:`LspClient.start`,
never at import time.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ToolError
from ..services import Service, spawn, terminate

if TYPE_CHECKING:
    from .config import ServerSpec

#: Language ids by extension, for ``didOpen`` (servers mostly ignore it, some need it).
LANGUAGE_IDS = {
    ".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript",
    ".cts": "typescript", ".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript",
    ".cjs": "javascript", ".go": "go", ".rs": "rust",
}  # fmt: skip


#: Lines of a server's stderr kept for the error that says it exited.
STDERR_LINES = 20
#: Of those, how many the error quotes (the last ones).
STDERR_QUOTED = 3

logger = logging.getLogger(__name__)


class LspError(ToolError):
    """A language server failed a request, timed out or died; the message is what the model sees."""


def file_uri(path: str | Path) -> str:
    """The ``file://`` URI of an absolute path."""
    return Path(path).absolute().as_uri()


def uri_path(uri: str) -> str:
    """The local path of a ``file://`` URI."""
    from urllib.parse import unquote, urlsplit

    return os.path.normpath(unquote(urlsplit(uri).path))


def _lookup(settings: Mapping[str, Any], section: str | None) -> Any:
    if not section:
        return dict(settings)
    node: Any = settings
    for part in section.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _converter() -> Any:
    """pygls's converter, lenient where lsprotocol cannot read what real servers send.

    Some servers (ty) announce notebook sync with a selector lsprotocol fails to structure, which would
    fail the whole ``initialize`` answer; we open no notebooks, so that part is read as an empty selector.
    """
    from lsprotocol import types
    from pygls.protocol import default_converter

    converter = default_converter()
    converter.register_structure_hook(
        types.NotebookDocumentSyncOptions, lambda _data, _type: types.NotebookDocumentSyncOptions([])
    )
    return converter


class LspClient(Service):
    """One running language server for one root (a :class:`~opencode_cli.services.Service`)."""

    def __init__(
        self,
        spec: ServerSpec,
        argv: list[str],
        root: Path,
        env: Mapping[str, str],
        *,
        start_timeout: float = 30.0,
        request_timeout: float = 30.0,
    ) -> None:
        self.spec = spec
        self.argv = argv
        self.root = root
        self.env = dict(env)
        self.name = f"lsp:{spec.name}"
        self.start_timeout = start_timeout
        self.request_timeout = request_timeout
        self.process: asyncio.subprocess.Process | None = None
        self.capabilities: Any = None
        self._client: Any = None
        self._versions: dict[str, int] = {}
        self._texts: dict[str, str] = {}
        #: The last diagnostics pushed for each URI, and an event set at every push.
        self.pushed: dict[str, list[Any]] = {}
        self._pushes: dict[str, asyncio.Event] = {}
        #: The last lines the server wrote on stderr (said when it exits on us).
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_LINES)
        self._stderr_task: asyncio.Task[None] | None = None
        #: The reader loop's stop signal (pygls's ``run_async`` takes a ``threading.Event``) and our tasks.
        self._stop = threading.Event()
        self._tasks: list[asyncio.Task[Any]] = []

    # -- lifecycle ------------------------------------------------------------------------------------

    @property
    def lost(self) -> bool:
        """Whether the server process has exited (a later call must start a new one)."""
        return self.process is None or self.process.returncode is not None

    def detail(self) -> str | None:
        """``pid N, root R`` while the server runs."""
        if self.lost:
            return None
        assert self.process is not None
        return f"pid {self.process.pid}, root {self.root}"

    async def start(self) -> None:
        """Spawn the server, then ``initialize`` it (bounded by ``start_timeout``)."""
        from lsprotocol import types
        from pygls.io_ import run_async
        from pygls.lsp.client import LanguageClient

        client = LanguageClient("opencode-tools", "0.1.0", converter_factory=_converter)
        self._client = client
        self._register_handlers(client, types)
        env = {**self.env, **dict(self.spec.env)}
        try:
            self.process = await spawn(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=str(self.root),
                env=env,
            )
        except OSError as error:
            raise LspError(f"cannot start {self.argv[0]}: {error.strerror or error}") from None
        assert self.process.stdin is not None and self.process.stdout is not None
        client.protocol.set_writer(self.process.stdin)
        self._stderr_task = asyncio.create_task(self._keep_stderr(), name=f"{self.name} stderr")
        reader = run_async(
            stop_event=self._stop,
            reader=self.process.stdout,
            protocol=client.protocol,
            logger=logger,
            error_handler=client.report_server_error,
        )
        self._tasks = [asyncio.create_task(reader, name=f"{self.name} reader"), self._stderr_task]
        params = types.InitializeParams(
            process_id=os.getpid(),
            root_uri=file_uri(self.root),
            root_path=str(self.root),
            workspace_folders=[types.WorkspaceFolder(uri=file_uri(self.root), name=self.root.name or "root")],
            initialization_options=dict(self.spec.initialization) or None,
            capabilities=types.ClientCapabilities(
                workspace=types.WorkspaceClientCapabilities(
                    configuration=True,
                    workspace_folders=True,
                    symbol=types.WorkspaceSymbolClientCapabilities(),
                ),
                text_document=types.TextDocumentClientCapabilities(
                    synchronization=types.TextDocumentSyncClientCapabilities(did_save=True),
                    publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
                    diagnostic=types.DiagnosticClientCapabilities(),
                    hover=types.HoverClientCapabilities(
                        content_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText]
                    ),
                    definition=types.DefinitionClientCapabilities(link_support=True),
                    references=types.ReferenceClientCapabilities(),
                    implementation=types.ImplementationClientCapabilities(link_support=True),
                    document_symbol=types.DocumentSymbolClientCapabilities(
                        hierarchical_document_symbol_support=True
                    ),
                    call_hierarchy=types.CallHierarchyClientCapabilities(),
                ),
                window=types.WindowClientCapabilities(work_done_progress=True),
            ),
        )
        result = await self._bounded(client.initialize_async(params), "initialize", self.start_timeout)
        self.capabilities = result.capabilities
        client.initialized(types.InitializedParams())

    def _register_handlers(self, client: Any, types: Any) -> None:
        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: Any) -> None:
            sent = self._versions.get(params.uri)
            if params.version is not None and sent is not None and params.version < sent:
                return  # about a text we have changed since
            self.pushed[params.uri] = list(params.diagnostics)
            self._pushes.setdefault(params.uri, asyncio.Event()).set()

        @client.feature(types.WORKSPACE_CONFIGURATION)
        def configuration(params: Any) -> list[Any]:
            return [_lookup(self.spec.initialization, item.section) for item in params.items]

        @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def progress(params: Any) -> None:
            return None

        @client.feature(types.CLIENT_REGISTER_CAPABILITY)
        def register(params: Any) -> None:
            return None

        @client.feature(types.WORKSPACE_WORKSPACE_FOLDERS)
        def folders(params: Any) -> list[Any]:
            return [types.WorkspaceFolder(uri=file_uri(self.root), name=self.root.name or "root")]

        @client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: Any) -> None:
            logger.debug("language server %s: %s", self.spec.name, params.message)

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def show_message(params: Any) -> None:
            logger.debug("language server %s: %s", self.spec.name, params.message)

    async def stop(self) -> None:
        """``shutdown`` and ``exit`` (bounded), then end the process group; idempotent."""
        client, process = self._client, self.process
        if client is not None and process is not None and process.returncode is None:
            try:
                await asyncio.wait_for(client.shutdown_async(None), 2.0)
                client.exit(None)
            except Exception:
                pass  # a server that cannot say goodbye is ended below all the same
        if process is not None:
            await terminate(process, 2.0)
        self._stop.set()
        tasks, self._tasks = self._tasks, []
        if tasks:
            await asyncio.wait(tasks, timeout=2.0)
        for task in tasks:
            task.cancel()

    async def _keep_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        async for line in self.process.stderr:
            text = line.decode("utf-8", "replace").strip()
            if text:
                self.stderr_tail.append(text)

    def _exit_reason(self) -> str:
        code = self.process.returncode if self.process is not None else None
        said = f": {' / '.join(list(self.stderr_tail)[-STDERR_QUOTED:])}" if self.stderr_tail else ""
        return f"exit code {code}{said}"

    # -- requests -------------------------------------------------------------------------------------

    async def _bounded(self, awaitable: Any, what: str, timeout: float | None = None) -> Any:
        """Await a request's answer for at most ``timeout`` seconds (``request_timeout``), or until the
        server exits, whichever comes first; every failure is an :class:`LspError`."""
        limit = self.request_timeout if timeout is None else timeout
        request = asyncio.ensure_future(awaitable)
        exited = asyncio.ensure_future(self.process.wait()) if self.process is not None else None
        try:
            done, _ = await asyncio.wait(
                [request] if exited is None else [request, exited],
                timeout=limit,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            if exited is not None:
                exited.cancel()
            if not request.done():
                request.cancel()
        if request not in done or request.cancelled():
            if self.lost:
                raise await self._exited(what)
            raise LspError(f"language server {self.spec.name} did not answer {what} within {limit:g}s")
        error = request.exception()
        if error is None:
            return request.result()
        if isinstance(error, LspError):
            raise error
        if self.lost:
            raise await self._exited(what)
        raise LspError(f"language server {self.spec.name} failed {what}: {error}")

    async def _exited(self, what: str) -> LspError:
        """The error of a server that exited during ``what``, with what it said last on stderr."""
        if self._stderr_task is not None:  # read to the end of the pipe
            await asyncio.wait({self._stderr_task}, timeout=1.0)
        return LspError(f"language server {self.spec.name} exited during {what} ({self._exit_reason()})")

    def _check(self) -> Any:
        if self._client is None or self.lost:
            raise LspError(f"language server {self.spec.name} is not running")
        return self._client

    def sync(self, path: str, text: str) -> bool:
        """Tell the server ``path`` holds ``text`` (``didOpen`` the first time, then ``didChange``);
        whether anything was sent (an unchanged open document is not sent again)."""
        from lsprotocol import types

        client = self._check()
        uri = file_uri(path)
        version = self._versions.get(uri)
        if version is not None and self._texts.get(uri) == text:
            return False
        self._pushes.setdefault(uri, asyncio.Event()).clear()
        if version is None:
            self._versions[uri] = 0
            language = LANGUAGE_IDS.get(os.path.splitext(path)[1], "plaintext")
            item = types.TextDocumentItem(uri=uri, language_id=language, version=0, text=text)
            client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        else:
            self._versions[uri] = version + 1
            document = types.VersionedTextDocumentIdentifier(uri=uri, version=version + 1)
            change = types.TextDocumentContentChangeWholeDocument(text=text)
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(text_document=document, content_changes=[change])
            )
        self._texts[uri] = text
        return True

    def open_file(self, path: str) -> None:
        """Open (or refresh) ``path`` from disk in the server."""
        with open(path, encoding="utf-8", errors="replace", newline="") as file:
            self.sync(path, file.read())

    @property
    def pulls(self) -> bool:
        """Whether the server answers ``textDocument/diagnostic`` (pull diagnostics)."""
        return getattr(self.capabilities, "diagnostic_provider", None) is not None

    async def diagnostics(self, path: str, wait: float, changed: bool) -> bool:
        """Bring the diagnostics of ``path`` (already synced) up to date in :attr:`pushed`: pulled when the
        server offers that, else the next push after a change, awaited at most ``wait`` seconds.

        Returns whether they are up to date (``False``: no push came in time). A pull that times out or
        a server that exits raises :class:`LspError`.
        """
        from lsprotocol import types

        client = self._check()
        uri = file_uri(path)
        if self.pulls:
            params = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
            report = await self._bounded(client.text_document_diagnostic_async(params), "diagnostics", wait)
            items = getattr(report, "items", None)
            if items is not None:  # an "unchanged" report keeps what we had
                self.pushed[uri] = list(items)
            return True
        event = self._pushes.setdefault(uri, asyncio.Event())
        if not changed and uri in self.pushed:
            return True
        assert self.process is not None
        waiters = {asyncio.ensure_future(event.wait()), asyncio.ensure_future(self.process.wait())}
        try:
            await asyncio.wait(waiters, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        if self.lost:
            raise LspError(
                f"language server {self.spec.name} exited while checking {path} ({self._exit_reason()})"
            )
        return event.is_set()

    async def refresh_others(self, path: str, wait: float) -> None:
        """Pull again the diagnostics of the other open documents, when the server says a change of one
        file may change those of others (``interFileDependencies``); each pull bounded by ``wait``."""
        self.forget_missing()
        provider = getattr(self.capabilities, "diagnostic_provider", None)
        if not getattr(provider, "inter_file_dependencies", False):
            return
        for uri in list(self._versions):
            if uri != file_uri(path):
                await self.diagnostics(uri_path(uri), wait, True)

    def forget_missing(self) -> None:
        """Close the open documents whose files are gone (deleted, moved) and drop their diagnostics."""
        from lsprotocol import types

        client = self._check()
        for uri in [uri for uri in self._versions if not os.path.exists(uri_path(uri))]:
            client.text_document_did_close(
                types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
            for known in (self._versions, self._texts, self.pushed):
                known.pop(uri, None)

    async def request(self, method: str, params: Any) -> Any:
        """Send one request by its LSP method name (lsprotocol ``params``), bounded; errors are
        :class:`LspError`."""
        client = self._check()
        future = client.protocol.send_request_async(method, params)
        return await self._bounded(future, method)
