"""A scripted OpenAI-compatible chat-completions server, and the handle the tests drive it with.

Run as a program (``python _scripted.py --script S --log L --ready R``) it serves, on a free port of
127.0.0.1, ``POST /v1/chat/completions`` and ``GET /v1/models`` with the standard library only. Each
request to ``/v1/chat/completions`` gets the next response of the script file ``S`` (JSON
``{"version": n, "responses": [...], "models": [...]}``, read again on every request; a new ``version``
starts the script over). A response is one of:

* ``{"text": "...", "tool_calls": [{"id", "name", "arguments"}], "split": N}``: the server makes the
  chunks a real endpoint streams: a first chunk with the role, the text in ``N`` pieces (default 3),
  each tool call opened by a chunk with its ``index``, ``id`` and name and its ``arguments`` in ``N``
  pieces (``"interleave": true`` alternates the calls' pieces), a last chunk with ``finish_reason``
  (``tool_calls`` or ``stop``, or ``"finish_reason"``), then, when the request asked for it
  (``stream_options.include_usage``), a usage chunk (``"usage"`` overrides the counts). A request with
  ``stream: false`` gets one ``chat.completion`` object made from the same fields;
* ``{"stream": [chunk, ...]}``: these chunks as they are (``id``, ``object``, ``created`` and ``model``
  filled in when missing);
* ``{"status": 401, "body": {...}}``: an HTTP error with that JSON body.

Any response may add ``"delay": seconds`` (wait before answering), ``"pause": seconds`` (wait between
chunks) or ``"cut_after": K`` (close the connection after ``K`` chunks, in the middle of the chunked
body). Every request, with its headers (lower-cased) and its JSON body, is appended to the log file
``L`` (JSON lines). Once listening, the port is written to ``R``. The server exits when its parent does.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
STARTUP_TIMEOUT = 60.0


# -- the server ------------------------------------------------------------------------------------------


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    """A tool call of a scripted response: ``arguments`` sent as the JSON text a model writes."""
    return {"id": call_id, "name": name, "arguments": json.dumps(arguments)}


def opencode(project_dir: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``opencode ARGS`` as a real process in ``project_dir`` (plugins not autoloaded), to its end."""
    script = Path(sys.executable).parent / "opencode"
    return subprocess.run(
        [str(script), *args],
        cwd=project_dir,
        env={**env, "OPENCODE_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def pieces(text: str, count: int) -> list[str]:
    """``text`` cut into at most ``count`` consecutive non-empty pieces of about the same size."""
    if not text:
        return []
    count = max(1, min(count, len(text)))
    size, extra = divmod(len(text), count)
    out, start = [], 0
    for number in range(count):
        end = start + size + (1 if number < extra else 0)
        out.append(text[start:end])
        start = end
    return out


def _usage(response: dict[str, Any]) -> dict[str, Any]:
    return response.get("usage") or {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


def _finish(response: dict[str, Any]) -> str:
    return response.get("finish_reason") or ("tool_calls" if response.get("tool_calls") else "stop")


def shorthand_chunks(response: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The chunks a real endpoint would stream for a shorthand response."""
    split = int(response.get("split", 3))
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": piece} for piece in pieces(response.get("text", ""), split)]
    per_call: list[list[dict[str, Any]]] = []
    for index, call in enumerate(response.get("tool_calls", [])):
        opening = {"index": index, "id": call["id"], "type": "function"}
        opening["function"] = {"name": call["name"], "arguments": ""}
        rest = [{"index": index, "function": {"arguments": p}} for p in pieces(call["arguments"], split)]
        per_call.append([opening, *rest])
    if response.get("interleave"):
        ordered = [d for row in zip_longest_lists(per_call) for d in row]
    else:
        ordered = [d for call_deltas in per_call for d in call_deltas]
    deltas += [{"tool_calls": [delta]} for delta in ordered]
    chunks = [{"choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": _finish(response)}]})
    if include_usage:
        chunks.append({"choices": [], "usage": _usage(response)})
    return chunks


def anthropic_events(response: dict[str, Any], model: str, number: int) -> list[dict[str, Any]]:
    """The server-sent events Anthropic's Messages API streams for a shorthand response: a thinking block
    (``"thinking"``, with a signature), the text in pieces, each tool call's input in pieces."""
    split = int(response.get("split", 3))
    usage = response.get("usage") or {"input_tokens": 11, "output_tokens": 7}
    message = {
        "id": f"msg_scripted_{number}", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": usage.get("input_tokens", 0), "output_tokens": 1},
    }  # fmt: skip
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    if response.get("thinking"):
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(response["thinking"], split)]
        deltas.append({"type": "signature_delta", "signature": f"sig-{number}"})
        blocks.append(({"type": "thinking", "thinking": "", "signature": ""}, deltas))
    if response.get("text"):
        deltas = [{"type": "text_delta", "text": p} for p in pieces(response["text"], split)]
        blocks.append(({"type": "text", "text": ""}, deltas))
    for call in response.get("tool_calls", []):
        start = {"type": "tool_use", "id": call["id"], "name": call["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(call["arguments"], split)]
        blocks.append((start, deltas))
    for index, (start, deltas) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    stop = "tool_use" if response.get("tool_calls") else "end_turn"
    delta = {"stop_reason": stop, "stop_sequence": None}
    events.append(
        {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage.get("output_tokens", 0)}}
    )
    events.append({"type": "message_stop"})
    return events


def gemini_chunks(response: dict[str, Any], number: int) -> list[dict[str, Any]]:
    """The ``GenerateContentResponse`` chunks Gemini streams (``alt=sse``) for a shorthand response: the
    text in pieces, each function call whole in one part with a ``thoughtSignature``, the last chunk with
    ``finishReason`` and the usage."""
    parts: list[dict[str, Any]] = [
        {"text": p} for p in pieces(response.get("text", ""), int(response.get("split", 3)))
    ]
    for call in response.get("tool_calls", []):
        signature = base64.b64encode(f"sig-{call['id']}".encode()).decode()
        parts.append(
            {
                "functionCall": {"name": call["name"], "args": json.loads(call["arguments"])},
                "thoughtSignature": signature,
            }
        )
    chunks = [
        {
            "candidates": [{"content": {"role": "model", "parts": [part]}, "index": 0}],
            "modelVersion": "scripted",
        }
        for part in parts
    ] or [{"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "index": 0}]}]
    chunks[-1]["candidates"][0]["finishReason"] = "STOP"
    chunks[-1]["usageMetadata"] = response.get("usage") or {
        "promptTokenCount": 11,
        "candidatesTokenCount": 7,
        "totalTokenCount": 18,
    }
    chunks[-1]["responseId"] = f"scripted-{number}"
    return chunks


def zip_longest_lists(rows: list[list[Any]]) -> list[list[Any]]:
    """``[[a0, b0], [a1, b1], [a2]]`` from ``[[a0, a1, a2], [b0, b1]]``."""
    longest = max((len(row) for row in rows), default=0)
    return [[row[i] for row in rows if i < len(row)] for i in range(longest)]


def completion(response: dict[str, Any], model: str) -> dict[str, Any]:
    """The ``chat.completion`` object of a shorthand response (for ``stream: false``)."""
    message: dict[str, Any] = {"role": "assistant", "content": response.get("text") or None}
    calls = response.get("tool_calls", [])
    if calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls
        ]
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(response)}],
        "usage": _usage(response),
    }


class Script:
    """The script file, read on each request; the position in it restarts with each new version."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.version: Any = None
        self.position = 0

    def read(self) -> dict[str, Any]:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {"responses": []}

    def next(self) -> tuple[int, dict[str, Any] | None]:
        with self.lock:
            data = self.read()
            if data.get("version") != self.version:
                self.version, self.position = data.get("version"), 0
            number = self.position
            self.position += 1
            responses = data.get("responses", [])
            return number, responses[number] if number < len(responses) else None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _record(self, body: Any) -> None:
        entry = {
            "method": self.command,
            "path": self.path,
            "authorization": self.headers.get("authorization"),
            "headers": {key.lower(): value for key, value in self.headers.items()},
            "body": body,
        }
        with self.server.log_lock, self.server.log.open("a") as log:
            log.write(json.dumps(entry) + "\n")

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._record(None)
        if self.path.rstrip("/") != "/v1/models":
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        models = self.server.script.read().get("models") or ["scripted-model"]
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "scripted"} for m in models]
        self._json(200, {"object": "list", "data": data})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            request = json.loads(raw)
        except ValueError:
            request = raw.decode(errors="replace")
        self._record(request)
        if self.path.rstrip("/") == "/v1/messages" and isinstance(request, dict):
            self._anthropic(request)
            return
        if ":streamGenerateContent" in self.path and isinstance(request, dict):
            self._gemini()
            return
        if self.path.rstrip("/") != "/v1/chat/completions" or not isinstance(request, dict):
            self._json(404, {"error": {"message": f"no route {self.path}"}})
            return
        number, response = self.server.script.next()
        if response is None:
            self._json(500, {"error": {"message": f"the script has no response #{number + 1}"}})
            return
        time.sleep(float(response.get("delay", 0)))
        if "status" in response:
            self._json(int(response["status"]), response.get("body", {}))
            return
        model = str(request.get("model", ""))
        if not request.get("stream"):
            self._json(200, completion(response, model))
            return
        if "stream" in response:
            chunks = [dict(chunk) for chunk in response["stream"]]
        else:
            include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
            chunks = shorthand_chunks(response, include_usage)
        for chunk in chunks:
            chunk.setdefault("id", f"chatcmpl-scripted-{number}")
            chunk.setdefault("object", "chat.completion.chunk")
            chunk.setdefault("created", int(time.time()))
            chunk.setdefault("model", model)
        self._stream(chunks, response)

    def _anthropic(self, request: dict[str, Any]) -> None:
        number, response = self.server.script.next()
        if response is None:
            error = {"type": "api_error", "message": f"the script has no response #{number + 1}"}
            self._json(500, {"type": "error", "error": error})
            return
        if "status" in response:
            self._json(int(response["status"]), response.get("body", {}))
            return
        events = anthropic_events(response, str(request.get("model", "")), number)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            self._chunk(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _gemini(self) -> None:
        number, response = self.server.script.next()
        if response is None:
            response = {
                "status": 500,
                "body": {"error": {"code": 500, "message": "no response", "status": "X"}},
            }
        if "status" in response:
            self._json(int(response["status"]), response.get("body", {}))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in gemini_chunks(response, number):
            self._chunk(f"data: {json.dumps(chunk)}\r\n\r\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _stream(self, chunks: list[dict[str, Any]], response: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        cut = response.get("cut_after")
        pause = float(response.get("pause", 0))
        for number, chunk in enumerate(chunks):
            if cut is not None and number >= cut:
                break
            if number and pause:
                time.sleep(pause)
            self._chunk(f"data: {json.dumps(chunk)}\n\n")
        if cut is not None:  # leave the chunked body unfinished
            self.wfile.flush()
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self._chunk("data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _chunk(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: Path, log: Path) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.script = Script(script)
        self.log = log
        self.log_lock = threading.Lock()


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True)
    parser.add_argument("--ready", type=Path, required=True)
    args = parser.parse_args(argv)
    server = Server(args.script, args.log)
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    temporary = args.ready.with_suffix(".tmp")
    temporary.write_text(str(server.server_address[1]))
    temporary.replace(args.ready)
    server.serve_forever()


# -- the handle the tests use -------------------------------------------------------------------------------


def refused_url() -> str:
    """An ``http://127.0.0.1:PORT/v1`` URL where nothing listens (the port was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def local_config(url: str, **options: Any) -> dict[str, Any]:
    """A config whose model is ``local/scripted-model``, on a ``[provider.local]`` at ``url`` (``options``
    added to its ``[provider.local.options]``)."""
    return {
        "model": "local/scripted-model",
        "provider": {"local": {"name": "Scripted", "options": {"baseURL": url, **options}}},
    }


def configure(project_dir: Path, config: dict[str, Any]) -> None:
    """Write ``config`` as the project's opencode.toml."""
    import tomli_w

    (project_dir / "opencode.toml").write_text(tomli_w.dumps(config))


class ScriptedModel:
    """A running scripted server: :attr:`url` (``http://127.0.0.1:PORT/v1``), :meth:`script`,
    :meth:`requests`, :meth:`stop`."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.script_path = folder / "script.json"
        self.log_path = folder / "requests.jsonl"
        self.output = folder / "server.out"
        self._version = 0
        self.script([])
        ready = folder / "port"
        argv = [sys.executable, str(HERE), "--script", str(self.script_path), "--log", str(self.log_path)]
        with self.output.open("wb") as out:
            self.process = subprocess.Popen(
                [*argv, "--ready", str(ready)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not ready.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the scripted server did not start:\n{self.output.read_text()}")
            time.sleep(0.02)
        self.port = int(ready.read_text())
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def script(self, responses: list[dict[str, Any]], models: list[str] | None = None) -> None:
        """Replace the script: the next request gets ``responses[0]``, and so on."""
        self._version += 1
        data = {"version": self._version, "responses": responses, "models": models or []}
        temporary = self.script_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data))
        temporary.replace(self.script_path)

    def requests(self) -> list[dict[str, Any]]:
        """Every request received so far: ``method``, ``path``, ``authorization``, ``headers``, ``body``."""
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line.strip()]

    def stop(self) -> None:
        """Stop the server's process group; raise if it outlives the stop."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(5)
        from _processes import wait_gone  # not at the top: this file also runs as the server

        if not wait_gone(self.process.pid):
            raise RuntimeError(f"the scripted server {self.process.pid} outlived its stop")


if __name__ == "__main__":
    main()
