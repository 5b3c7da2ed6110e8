"""What a bot process writes besides its answers (docs/protocol.md, "Transport").

    BotOutput   `drain` its stderr in a thread of its own (a bot never blocks writing it),
                keeping the last lines for faults (`tail`) and writing every line to the
                entrant's log (`log`) while the log file holds under LOG_BYTES; `count` the
                bytes written in a game (stdout and stderr), calling `on_flood` once past the
                limit; `close` once the process is stopped
"""

from __future__ import annotations

import collections
import os
import select
import threading
import time

TAIL_LINES = 10                  # stderr lines a fault keeps
TAIL_WIDTH = 300                 # characters kept of each
LOG_BYTES = 8 << 20              # bytes of an entrant's log file, beyond which lines are dropped
READ_BYTES = 1 << 16             # bytes asked of a pipe at a time


class BotOutput:
    """The output of one bot process. log_path: the entrant's log file (None: no log); limit:
    the bytes a game may write (None: no limit); on_flood: called once when they are past it;
    prefix(): the text before each line of the log (its pid and game)."""

    def __init__(self, log_path: str | None, limit: int | None, on_flood, prefix):
        self.log_path, self.limit = log_path, limit
        self._on_flood, self._prefix = on_flood, prefix
        self.written = 0                     # bytes written (stdout and stderr) in this game
        self.flooded = False                 # past the limit
        self._tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self._log_fd: int | None = None
        self._log_lock = threading.Lock()
        self._taking = threading.Lock()      # held by the drain from a read to the chunk's lines
        self._drain: threading.Thread | None = None
        self._fd: int | None = None

    def drain(self, fd: int, name: str) -> None:
        """Read the stderr pipe `fd` until its end, in a thread called `name`."""
        self._fd = fd
        self._drain = drain = threading.Thread(target=self._drain_stderr, args=(fd,), name=name,
                                               daemon=True)
        drain.start()

    def count(self, n: int) -> None:
        """`n` more bytes written; past the limit, `on_flood` (once)."""
        self.written += n
        if self.limit is not None and self.written > self.limit and not self.flooded:
            self.flooded = True
            self._on_flood()

    def _drain_stderr(self, fd: int):
        partial = b""
        while True:
            try:  # wait outside the lock: what the pipe holds is read, and taken in, under it
                select.select([fd], [], [])
            except (OSError, ValueError):
                break
            with self._taking:
                try:
                    chunk = os.read(fd, READ_BYTES)
                except OSError:
                    break
                if not chunk:
                    break
                self.count(len(chunk))
                lines = (partial + chunk).split(b"\n")
                partial = lines.pop()
                if len(partial) > 4096:  # a line without end: keep it in pieces
                    lines.append(partial)
                    partial = b""
                for line in lines:
                    self._tail.append(line[:TAIL_WIDTH].decode("utf-8", errors="replace").rstrip())
                    self.log(line)
        if partial:
            self._tail.append(partial[:TAIL_WIDTH].decode("utf-8", errors="replace").rstrip())
            self.log(partial)

    def log(self, line: bytes):
        """One line to the entrant's log (from the stderr drain, or a `log` message)."""
        with self._log_lock:
            if self.log_path is None:
                return
            if self._log_fd is None:  # opened at the first line: a quiet bot leaves no empty log
                try:
                    os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
                    self._log_fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                                           0o644)
                except OSError:
                    self.log_path = None
                    return
            if os.fstat(self._log_fd).st_size > LOG_BYTES:  # the file: all processes' lines
                line = f"... (more output; a log keeps about {LOG_BYTES >> 20} MiB)".encode()
                self.log_path = None  # this process logs no more
            try:  # one write per line: O_APPEND keeps the lines of several processes apart
                os.write(self._log_fd, self._prefix().encode() + line + b"\n")
            except OSError:
                pass

    def tail(self, exited: bool) -> str:
        """The last stderr lines, once the drain has taken in what the bot wrote so far (all of
        it when the bot has `exited`; else waiting at most 0.2 s for the pipe to be empty)."""
        if self._drain is not None:
            if exited:
                self._drain.join(1.0)
            else:
                assert self._fd is not None  # set with the drain
                deadline = time.monotonic() + 0.2
                while time.monotonic() < deadline:
                    with self._taking:  # a chunk read is taken in; an unread one is in the pipe
                        if not select.select([self._fd], [], [], 0)[0]:
                            break
                    time.sleep(0.002)
        return "\n".join(self._tail)

    def close(self) -> bool:
        """Stop logging, once the process is stopped (its stderr's end is drained within 1 s);
        False while the drain still reads (the pipe must then stay open)."""
        if self._drain is not None:
            self._drain.join(1.0)
        with self._log_lock:
            if self._log_fd is not None:
                os.close(self._log_fd)
                self._log_fd = None
            self.log_path = None
        return not (self._drain and self._drain.is_alive())


__all__ = ["BotOutput", "LOG_BYTES", "TAIL_LINES", "TAIL_WIDTH", "READ_BYTES"]
