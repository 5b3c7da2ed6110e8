"""The play page of `kdtourney play`, served on this machine only (the standard library's
ThreadingHTTPServer on 127.0.0.1): the page (templates/play.html.j2, play.js) asks for the position
(`GET /state?since=VERSION`, held until it changes: no polling in a loop) and sends the person's
moves (`POST /move`), which the engine checks (kdtourney.commands.play.Board) before they count.

Requests whose Host is not this server's address are refused (a web page elsewhere cannot reach
it through a name that resolves here)."""

from __future__ import annotations

import json
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from kdtourney import __version__
from kdtourney.commands.play import Board
from kdtourney.report import replays, svg
from kdtourney.report.page import SEAT_COLORS, json_for_script, render

MAX_BODY = 4096  # bytes of a move


def page(title: str) -> str:
    """The play page, self-contained but for what it asks this server."""
    data = dict(replays.constants(), palette={str(k): v for k, v in svg.PALETTE.items()},
                seatColors=SEAT_COLORS, cell=svg.CELL)
    return render({"title": title, "version": __version__, "connect_self": True,
                   "data": json_for_script(data)}, "play.html.j2", scripts=("board.js", "play.js"))


class Server(ThreadingHTTPServer):
    """The play page's server for `board`, on 127.0.0.1:`port` (0: a free port), in a thread of
    its own from `start` to `stop`."""

    daemon_threads = True  # a long poll left waiting does not hold the command at its end

    def __init__(self, board: Board, title: str, port: int = 0):
        super().__init__(("127.0.0.1", port), _Handler)
        self.board, self.html = board, page(title).encode("utf-8")
        self.url = f"http://127.0.0.1:{self.server_address[1]}/"
        self._thread = threading.Thread(target=self.serve_forever, name="play-page", daemon=True)

    def handle_error(self, request, client_address):
        """One line, not a traceback; a page that went away mid-answer is no news."""
        exc = sys.exc_info()[1]
        if not isinstance(exc, ConnectionError):
            print(f"warning: a request of the play page failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.board.close()  # long polls return
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, format, *args):  # the terminal is the command's
        pass

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, value) -> None:
        self._send(status, json.dumps(value).encode("utf-8"))

    def _host_ok(self) -> bool:
        host = self.headers.get("Host", "")
        port = self.server.server_address[1]
        if host in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return True
        self._json(HTTPStatus.FORBIDDEN, {"error": "this server answers 127.0.0.1 only"})
        return False

    def do_GET(self):
        if not self._host_ok():
            return
        url = urlsplit(self.path)
        if url.path == "/":
            self._send(HTTPStatus.OK, self.server.html, "text/html")
        elif url.path == "/state":
            try:
                since = int(parse_qs(url.query).get("since", ["-1"])[0])
            except ValueError:
                return self._json(HTTPStatus.BAD_REQUEST, {"error": "since is a number"})
            self._json(HTTPStatus.OK, self.server.board.state(since))
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such page"})

    def do_POST(self):
        if not self._host_ok():
            return
        board = self.server.board
        board.touch()
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            return self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "too long"})
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return self._json(HTTPStatus.BAD_REQUEST, {"error": "not JSON"})
        path = urlsplit(self.path).path
        if path == "/move":
            move = body.get("move") if isinstance(body, dict) else None
            version = body.get("version") if isinstance(body, dict) else None
            if not isinstance(move, dict) or not isinstance(version, int):
                return self._json(HTTPStatus.BAD_REQUEST, {"error": "give a move and a version"})
            refused = board.answer(move, version)
            if refused:
                return self._json(HTTPStatus.CONFLICT, {"error": refused})
        elif path == "/next":
            board.next_game()
        elif path == "/close":
            board.close()
        else:
            return self._json(HTTPStatus.NOT_FOUND, {"error": "no such action"})
        self._json(HTTPStatus.OK, {"ok": True})


__all__ = ["Server", "page"]
