"""Bots in their own process: the harness side of KDTP/1 (the wire format is kdtourney.bots.kdtp).

A `Program` is how to start a bot: a command declared in a TOML file of a bots folder, or
`kdtourney serve SPEC` for a Python bot played in isolation. An `ExternalBot` is a `Bot` whose
`setup`, `act` and `finish` talk to such a process; the arena plays it like any other bot.

Processes
---------
- A `ProcessPool` (one per worker process) keeps the bot processes, one per entrant and seat in use:
  a game borrows them (`ExternalBot`), gives them back at `close`, and the next game reuses them,
  so a slow start (a JVM) is paid once. A process that crashed, timed out or broke the protocol is
  killed and a new one started for the next game. `ProcessPool.close` sends `quit`, waits 2 s,
  then kills what is left.
- Every bot starts in its own session (its own process group): killing it kills the group, so a
  child it started dies too and cannot keep a pipe open. On Linux the bot also gets SIGKILL when
  the process that started it dies (PR_SET_PDEATHSIG); the pool reports its process groups
  (`track`) so that the parent of a dead worker can kill the bots' children as well.
- Waiting is the harness's: replies are read from a non-blocking pipe through a selector with a
  deadline (the move time limit plus the margin; the start-up timeout for `hello`), never with a
  blocking readline; a line longer than `kdtp.MAX_LINE` is a protocol error. A pidfd (where the
  system has one) tells at once that the bot exited even while a child holds its pipes.
- stderr is drained continuously by a thread (a bot is never blocked writing it): the last lines
  are kept for faults, and every line goes to the entrant's log file while it is under LOG_BYTES.

Failures raise `BotFailure` subclasses (timeout, exited, protocol, illegal answer), which the arena
turns into faults (kdtourney.arena.match) with the bot's last stderr lines.
"""

from __future__ import annotations

import collections
import ctypes
import hashlib
import json
import os
import queue
import re
import select
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from kdtourney.bots import kdtp
from kdtourney.bots.base import Bot

DEFAULT_MOVE_TIME_MARGIN = 0.2   # s the harness waits beyond --move-time-limit (pipes, scheduler)
DEFAULT_STARTUP_TIMEOUT = 20.0   # s for a new process to answer hello (a JVM, a network loading)
QUIT_GRACE = 2.0                 # s a bot has to exit after quit before it is killed
WRITE_TIMEOUT = 5.0              # s a message without an answer (game, result) may take to write
TAIL_LINES = 10                  # stderr lines a fault keeps
TAIL_WIDTH = 300                 # characters kept of each
LOG_BYTES = 8 << 20              # bytes of an entrant's log file, beyond which lines are dropped
_READ = 1 << 16


# --- failures ----------------------------------------------------------------------------------

class BotFailure(Exception):
    """An out-of-process bot failed; `stderr`: its last stderr lines (may be empty)."""

    def __init__(self, message: str, stderr: str = ""):
        super().__init__(message)
        self.stderr = stderr


class BotTimeout(BotFailure):
    """No answer by the deadline."""


class BotExited(BotFailure):
    """The process exited, closed its output, or could not be started."""


class BotProtocolError(BotFailure):
    """An answer that is not KDTP: not JSON, not the expected message, a line too long."""


class IllegalAnswer(BotFailure):
    """A well-formed action that is not one of the legal actions sent."""


class StartupError(ValueError):
    """A program that does not start or does not answer hello; one line naming its origin."""


# --- programs ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Program:
    """How to start a bot. name: the bot's name in the registry; command: the argv, its program
    resolved; cwd: the working directory; origin: the TOML file (or 'kdtourney serve');
    declared: the command as the TOML file wrote it."""

    name: str
    command: tuple
    cwd: str
    origin: str
    declared: tuple = ()

    @property
    def executable(self) -> str | None:
        """The program the command runs, as found (a path), None when it is not there."""
        first = self.command[0]
        if os.sep in first:
            return first if os.access(first, os.X_OK) and os.path.isfile(first) else None
        return shutil.which(first)

    def file_run(self) -> str | None:
        """The file the bot's code is in: the program when it lies in the TOML's folder
        (`./mybot`), else the first argument naming a file there (`node bot.js`, `java -jar
        bot.jar`, `/usr/bin/python3 bot.py`), else the program (found on the PATH)."""
        program = self.executable
        if program is None or not os.path.abspath(program).startswith(self.cwd + os.sep):
            for arg in self.command[1:]:
                path = Path(self.cwd, arg)
                if not arg.startswith("-") and path.is_file():
                    return str(path)
        return program

    def identity(self, hello: dict | None) -> dict:
        """The code identity of this bot (see the entrants table): the declared command, the
        sha256 of the file it runs, and what it answered to hello."""
        path = self.file_run()
        digest = None
        if path is not None:
            with open(path, "rb") as f:
                digest = hashlib.file_digest(f, "sha256").hexdigest()
        hello = hello or {}
        return {"kind": "kdtp", "command": list(self.declared or self.command),
                "file_sha256": digest, "bot_name": hello.get("name"),
                "bot_version": hello.get("version")}


@dataclass(frozen=True)
class Declared:
    """A bot declared by a TOML file: its program, description and default options."""

    program: Program
    description: str
    options: dict


def load_toml(path: Path, origin: str | None = None) -> Declared:
    """The bot a TOML file declares: `name`, `command` (a list, or a string split like a shell
    would), optional `description` and `[options]` (defaults: int, float, bool or str). Relative
    paths in the command resolve against the file's folder, which is also the working directory.
    ValueError with a one-line message for a file that is not such a declaration."""
    origin = origin or str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"not a readable TOML file: {exc}") from None
    unknown = sorted(set(data) - {"name", "command", "description", "options"})
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (a bot file has name, command, description "
                         "and [options])")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("no name: write name = \"mybot\"")
    command = data.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    if not command or not isinstance(command, list) or not command[0] \
            or not all(isinstance(a, str) for a in command):
        raise ValueError("no command: write command = [\"./mybot\", \"--an-argument\"]")
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise ValueError("options must be a table: [options] then key = default lines")
    for key, value in options.items():
        if not isinstance(value, (bool, int, float, str)):
            raise ValueError(f"option {key} = {value!r}: a default is an int, float, bool or string")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ValueError("description must be a string")
    folder = str(Path(origin).parent)
    first = command[0]
    if os.sep in first and not os.path.isabs(first):
        first = os.path.normpath(os.path.join(folder, first))
    program = Program(name=name, command=(first, *command[1:]), cwd=folder, origin=origin,
                      declared=tuple(command))
    return Declared(program, description.strip(), dict(options))


def serve_program(spec: str, sources_file: str) -> Program:
    """`kdtourney serve SPEC` with the bot sources of `sources_file` (JSON {origin: text}): a
    Python bot in its own process, exactly as the harness would play it in-process."""
    command = (sys.executable, "-m", "kdtourney", "serve", spec, "--sources", sources_file)
    return Program(name=spec, command=command, cwd=os.getcwd(), origin="kdtourney serve")


# --- settings ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ProcessSettings:
    """How out-of-process bots are run. move_time_limit: seconds per decision (None: no limit);
    margin: seconds waited beyond it; startup_timeout: seconds for hello; log_dir: the folder of
    the entrants' stderr logs (None: only the last lines are kept, for faults)."""

    move_time_limit: float | None = None
    margin: float = DEFAULT_MOVE_TIME_MARGIN
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    log_dir: str | None = None


def log_name(spec: str) -> str:
    """The log file of an entrant: its spec with what a file name cannot hold replaced."""
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", spec) + ".log"


# --- starting processes ------------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1
_LIBC = None
_LAUNCHER = None


def _libc():
    """The C library, for prctl (Linux only; None elsewhere)."""
    global _LIBC
    if _LIBC is None and sys.platform.startswith("linux"):
        try:
            _LIBC = ctypes.CDLL(None, use_errno=True)
        except OSError:
            pass
    return _LIBC


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> None:
    """Linux: this process gets `sig` when its parent dies (strictly: when the thread that started
    it ends), at once if `parent` (a pid) is gone already. Elsewhere nothing happens."""
    libc = _libc()
    if libc is None:
        return
    libc.prctl(_PR_SET_PDEATHSIG, int(sig))
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), sig)


def _popen(program: Program) -> subprocess.Popen:
    return subprocess.Popen(
        program.command, cwd=program.cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, start_new_session=True, close_fds=True,
        preexec_fn=(lambda parent=os.getpid(): die_with_parent(signal.SIGKILL, parent))
        if _libc() else None)


class _Launcher(threading.Thread):
    """Starts the bot processes. The parent-death signal is tied to the thread that forked, so
    the forking is done by this one thread, which lives as long as the process."""

    def __init__(self):
        super().__init__(name="kdtourney-bot-launcher", daemon=True)
        self.jobs: queue.Queue = queue.Queue()

    def run(self):
        while True:
            program, reply = self.jobs.get()
            try:
                reply.put((True, _popen(program)))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                reply.put((False, exc))

    def start_process(self, program: Program) -> subprocess.Popen:
        reply: queue.Queue = queue.Queue(maxsize=1)
        self.jobs.put((program, reply))
        ok, value = reply.get()
        if not ok:
            raise value
        return value


def start_process(program: Program) -> subprocess.Popen:
    """Start `program` in its own session, pipes on stdin, stdout and stderr."""
    global _LAUNCHER
    if _LAUNCHER is None:
        _libc()  # loaded here, not in the child between fork and exec
        _LAUNCHER = _Launcher()
        _LAUNCHER.start()
    return _LAUNCHER.start_process(program)


def kill_group(pgid: int) -> None:
    """SIGKILL to every process of a bot's process group (gone already: nothing to do)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# --- one bot process ---------------------------------------------------------------------------

class BotProcess:
    """One running bot: its pipes, its stderr drain, and the harness's side of the exchange."""

    def __init__(self, program: Program, settings: ProcessSettings, log_path: str | None = None):
        self.program, self.settings, self.log_path = program, settings, log_path
        self.proc = None
        self.hello: dict | None = None
        self.game = None                     # the game being played (for the log)
        self.broken = False
        self._buffer = bytearray()
        self._scanned = 0                    # bytes of the buffer known to hold no newline
        self._tail = collections.deque(maxlen=TAIL_LINES)
        self._log_fd = None
        self._log_lock = threading.Lock()
        self._draining = False               # the drain is taking in a chunk
        self._drain = None
        self._selector = None
        self._pidfd = None
        self.stopped = False
        self.started_at = 0.0

    # starting

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and not self.broken and self.proc.poll() is None

    def start(self) -> dict:
        """Start the process and exchange hello; returns the bot's hello. BotExited (could not
        start, exited), BotTimeout (no hello within the start-up timeout), BotProtocolError."""
        self.spawn()
        return self.handshake()

    def spawn(self) -> None:
        """Start the process (BotExited if it cannot be), its stderr drain and its log."""
        try:
            self.proc = start_process(self.program)
        except OSError as exc:
            self.broken = True
            raise BotExited(f"cannot start {shlex.join(self.program.declared or self.program.command)}"
                            f": {exc.strerror or exc}") from None
        self.started_at = time.monotonic()
        self._drain = threading.Thread(target=self._drain_stderr, args=(self.proc.stderr.fileno(),),
                                       name=f"kdtourney-stderr-{self.proc.pid}", daemon=True)
        self._drain.start()
        os.set_blocking(self.proc.stdout.fileno(), False)
        os.set_blocking(self.proc.stdin.fileno(), False)
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout.fileno(), selectors.EVENT_READ, "out")
        try:
            self._pidfd = os.pidfd_open(self.proc.pid)
            self._selector.register(self._pidfd, selectors.EVENT_READ, "exit")
        except (AttributeError, OSError):
            self._pidfd = None

    def handshake(self) -> dict:
        """hello and its answer, within the start-up timeout counted from the start."""
        deadline = self.started_at + self.settings.startup_timeout
        self.send(kdtp.encode(kdtp.hello()), deadline, "hello")
        answer = self.receive(deadline, "hello")
        if answer["type"] != "hello" or not isinstance(answer.get("name"), str):
            self.fail(BotProtocolError, f"answered {_show(answer)} to hello, not "
                                        '{"type": "hello", "name": ...}')
        self.hello = {k: answer.get(k) for k in ("name", "version", "author")}
        return self.hello

    # talking

    def send(self, line: bytes, deadline: float | None, what: str) -> None:
        """Write one line before `deadline` (monotonic seconds, None: no limit)."""
        fd = self.proc.stdin.fileno()
        view = memoryview(line)
        while view:
            try:
                view = view[os.write(fd, view):]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                self.fail(BotExited, f"{self._gone()} (while sending {what})")
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                self.fail(BotTimeout, f"does not read its input (while sending {what})")
            with selectors.DefaultSelector() as writing:
                writing.register(fd, selectors.EVENT_WRITE)
                writing.select(left)

    def receive(self, deadline: float | None, what: str, known: dict | None = None):
        """The next message before `deadline`; `log` messages on the way go to the log. A line
        that is a key of `known` is not parsed: its value is returned."""
        while True:
            line = self._next_line(deadline, what)
            if known is not None and line in known:
                return known[line]
            message = self._message(line, what)
            if message is not None:
                return message

    def expect_silence(self, what: str) -> None:
        """Before asking: what the bot wrote since its last answer may only be `log` lines (an
        answer to nothing would be taken for the next answer)."""
        self._read_stdout(what)
        while (line := self._pop_line()) is not None:
            message = self._message(line, what)
            if message is not None:
                self.fail(BotProtocolError, f"wrote {_show(message)} before it was asked for {what}")

    def _message(self, line: bytes, what: str) -> dict | None:
        """The message of a line; None for a `log` message, which goes to the log."""
        try:
            message = kdtp.decode(line)
        except kdtp.ProtocolError as exc:
            self.fail(BotProtocolError, f"answered {what} with {exc}")
        if message["type"] == "log":
            self._log(f"log: {message.get('text')}".encode(errors="replace"))
            return None
        return message

    def _pop_line(self) -> bytes | None:
        """The first complete line of what was read, None if there is none yet."""
        end = self._buffer.find(b"\n", self._scanned)
        if end < 0:
            self._scanned = len(self._buffer)
            return None
        line = bytes(self._buffer[:end])
        del self._buffer[:end + 1]
        self._scanned = 0
        return line

    def _next_line(self, deadline, what) -> bytes:
        while True:
            line = self._pop_line()
            if line is not None:
                return line
            if len(self._buffer) > kdtp.MAX_LINE:
                self.fail(BotProtocolError, f"answered {what} with a line longer than "
                                            f"{kdtp.MAX_LINE} bytes")
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                self.fail(BotTimeout, self._late(what))
            if self._pidfd is None:  # no pidfd: look at the process now and then
                left = 0.1 if left is None else min(left, 0.1)
            events = self._selector.select(left)
            if self._read_stdout(what):
                continue
            exited = any(key.data == "exit" for key, _ in events) or (
                self._pidfd is None and self.proc.poll() is not None)
            if exited:
                self._read_stdout(what)
                if b"\n" not in self._buffer:
                    self.fail(BotExited, f"{self._gone()} (while asked for {what})")

    def _read_stdout(self, what) -> bool:
        """Append what stdout has to the buffer; True if anything came. EOF: BotExited."""
        got = False
        while len(self._buffer) <= kdtp.MAX_LINE:
            try:
                chunk = os.read(self.proc.stdout.fileno(), _READ)
            except BlockingIOError:
                return got
            if not chunk:
                if got:
                    return True
                try:  # exiting closes stdout a moment before the exit status is there
                    self.proc.wait(0.5)
                except subprocess.TimeoutExpired:
                    self.fail(BotExited, f"closed its standard output (while asked for {what})")
                self.fail(BotExited, f"{self._gone()} (while asked for {what})")
            self._buffer += chunk
            got = True
            if len(chunk) < _READ:  # the pipe is empty now (a read takes what a pipe has)
                return True
        return got

    def _late(self, what: str) -> str:
        if what == "hello":
            return f"did not answer hello within the start-up timeout of " \
                   f"{self.settings.startup_timeout:g} s"
        limit = self.settings.move_time_limit
        return f"no answer to {what} within the move time limit of {limit:g} s + " \
               f"{self.settings.margin:g} s margin"

    def _gone(self) -> str:
        code = self.proc.poll()
        if code is None:
            return "stopped reading its input"
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with status {code}"

    def fail(self, kind: type, message: str):
        """Kill the bot (it is restarted for the next game) and raise `kind` with its stderr."""
        self.broken = True
        self.stop(grace=0)
        raise kind(message, self.stderr_tail())

    # stderr and the log

    def _drain_stderr(self, fd: int):
        partial = b""
        while True:
            self._draining = False
            try:
                chunk = os.read(fd, _READ)
            except OSError:
                break
            self._draining = True
            if not chunk:
                break
            lines = (partial + chunk).split(b"\n")
            partial = lines.pop()
            if len(partial) > 4096:  # a line without end: keep it in pieces
                lines.append(partial)
                partial = b""
            for line in lines:
                self._tail.append(line[:TAIL_WIDTH].decode("utf-8", errors="replace").rstrip())
                self._log(line)
        if partial:
            self._tail.append(partial[:TAIL_WIDTH].decode("utf-8", errors="replace").rstrip())
            self._log(partial)

    def _log(self, line: bytes):
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
            prefix = f"[pid {self.pid} game {self.game}] ".encode()
            try:  # one write per line: O_APPEND keeps the lines of several processes apart
                os.write(self._log_fd, prefix + line + b"\n")
            except OSError:
                pass

    def stderr_tail(self) -> str:
        """The last stderr lines, once the drain has taken in what the bot wrote so far (all of
        it when the bot has exited; else waiting at most 0.2 s for the pipe to be empty)."""
        if self._drain is not None and self.proc is not None:
            if self.proc.poll() is not None:
                self._drain.join(1.0)
            else:
                deadline = time.monotonic() + 0.2
                fd = self.proc.stderr.fileno()
                while (self._draining or select.select([fd], [], [], 0)[0]) \
                        and time.monotonic() < deadline:
                    time.sleep(0.002)
        return "\n".join(self._tail)

    # stopping

    def quit(self) -> None:
        """Ask the bot to exit (no waiting)."""
        if self.alive():
            try:
                self.send(kdtp.encode(kdtp.quit_message()), time.monotonic() + 0.2, "quit")
            except BotFailure:
                pass

    def stop(self, grace: float = QUIT_GRACE) -> None:
        """Wait up to `grace` seconds for the bot to exit, then kill its process group; reap it.
        Once only: afterwards its pid may belong to another process."""
        if self.proc is None or self.stopped:
            return
        self.stopped = self.broken = True
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
        kill_group(self.proc.pid)  # the group: children it started go too
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if self._drain is not None:
            self._drain.join(1.0)
        with self._log_lock:
            if self._log_fd is not None:
                os.close(self._log_fd)
                self._log_fd = None
            self.log_path = None
        if self.proc.stderr is not None and not (self._drain and self._drain.is_alive()):
            self.proc.stderr.close()


def _show(message) -> str:
    text = json.dumps(message)
    return text if len(text) <= 80 else text[:77] + "..."


# --- the pool ----------------------------------------------------------------------------------

class ProcessPool:
    """The bot processes of one worker process (see the module docstring).

    track: called with the list of the live bots' process groups whenever it changes (the local
    runner's parent kills them if this worker dies). `game`: the game index being played, for the
    `game` messages and the logs.
    """

    def __init__(self, settings: ProcessSettings | None = None, track=None):
        self.settings = settings or ProcessSettings()
        self.track = track
        self.game = 0
        self._idle: dict = collections.defaultdict(list)   # (program, spec) -> [BotProcess]
        self._all: list[BotProcess] = []
        self._tmp = None

    def file(self, name: str, text: str) -> str:
        """A file of this pool's temporary folder (removed at close), written once."""
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="kdtourney-pool-")
        path = os.path.join(self._tmp, name)
        if not os.path.exists(path):
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        return path

    def bot(self, program: Program, spec: str, options: dict) -> "ExternalBot":
        """A new ExternalBot for one game of the entrant `spec`."""
        return ExternalBot(self, program, spec, options)

    def lend(self, program: Program, spec: str) -> BotProcess:
        """A live process of this entrant, started if none is idle (not started yet: the bot's
        first `setup` starts it)."""
        idle = self._idle[(program, spec)]
        while idle:
            process = idle.pop()
            if process.alive():
                return process
            self._retire(process)
        log = None if self.settings.log_dir is None else os.path.join(self.settings.log_dir,
                                                                      log_name(spec))
        process = BotProcess(program, self.settings, log)
        self._all.append(process)
        return process

    def started(self, process: BotProcess) -> None:
        self._tracked()

    def give_back(self, program: Program, spec: str, process: BotProcess) -> None:
        if process.alive():
            self._idle[(program, spec)].append(process)
        else:
            self._retire(process)

    def _retire(self, process: BotProcess) -> None:
        process.stop(grace=0)
        if process in self._all:
            self._all.remove(process)
        self._tracked()

    def _tracked(self):
        if self.track is not None:
            self.track([p.pid for p in self._all if p.proc is not None and p.proc.poll() is None])

    def kill_all(self) -> None:
        """Kill every bot's process group now, without a word (this process is going away)."""
        for process in self._all:
            if process.pid is not None and not process.stopped:
                kill_group(process.pid)

    def close(self) -> None:
        """quit to every bot, 2 s to exit, then kill what is left (and their children)."""
        processes, self._all = self._all, []
        self._idle.clear()
        for process in processes:
            process.quit()
        deadline = time.monotonic() + QUIT_GRACE
        for process in processes:
            process.stop(grace=max(0.0, deadline - time.monotonic()))
        if self.track is not None:
            self.track([])
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --- the bot -----------------------------------------------------------------------------------

class ExternalBot(Bot):
    """A bot in another process, for one game (a dynasty's three deals): `setup` sends `game`
    (starting the process if needed), `act` sends `act` and waits for the action until the move
    time limit plus the margin, `finish` sends `result`, `close` gives the process back."""

    out_of_process = True

    def __init__(self, pool: ProcessPool, program: Program, spec: str, options: dict,
                 owns_pool: bool = False):
        self.pool, self.program, self.spec, self.options = pool, program, spec, dict(options)
        self.name = program.name
        self.owns_pool = owns_pool  # close() closes the pool too
        self._process: BotProcess | None = None

    def setup(self, seat, rules, seed):
        if self._process is None:
            self._process = self.pool.lend(self.program, self.spec)
        process = self._process
        if not process.alive():
            if process.proc is not None:  # died since its last game: a fresh one
                self.pool.give_back(self.program, self.spec, process)
                process = self._process = self.pool.lend(self.program, self.spec)
            process.game = self.pool.game  # what it writes while starting is logged in this game
            try:
                process.start()
            finally:
                self.pool.started(process)
        process.game = self.pool.game
        kdtp.warm_up()
        message = kdtp.game_message(self.pool.game, seat, rules, int(seed), self.options,
                                    self.pool.settings.move_time_limit)
        process.send(kdtp.encode(message), time.monotonic() + WRITE_TIMEOUT, "game")

    def act(self, view):
        started = time.monotonic()
        limit = self.pool.settings.move_time_limit
        deadline = None if limit is None else started + limit + self.pool.settings.margin
        legal = view.legal_actions()
        left = None if limit is None else max(0.0, limit - (time.monotonic() - started))
        process = self._process
        process.expect_silence("act")
        process.send(kdtp.act_line(view, legal, left), deadline, "act")
        # an answer written compactly, as most bots write it, is known without parsing it
        message = process.receive(deadline, "act", kdtp.answer_lines())
        if isinstance(message, int):  # an action, by its compact line
            if message in legal:
                return message
            answer = kdtp.action_text(message)
        else:
            if message["type"] != "action" or "action" not in message:
                process.fail(BotProtocolError, f"answered act with {_show(message)}, not "
                                               '{"type": "action", "action": ...}')
            answer = kdtp.canonical(message["action"])
        texts = {kdtp.action_text(a): a for a in legal}
        if answer not in texts:
            raise IllegalAnswer(f"answered {answer[:100]}, not one of the {len(legal)} legal "
                                f"actions of its {view.phase} decision in round {view.round}",
                                process.stderr_tail())
        return texts[answer]

    def finish(self, scores, ranks):
        process = self._process
        if process is not None and process.alive():
            try:
                process.send(kdtp.encode(kdtp.result_message(scores, ranks)),
                             time.monotonic() + WRITE_TIMEOUT, "result")
            except BotFailure:
                pass  # broken now: restarted before the next game

    def close(self):
        if self._process is not None:
            self.pool.give_back(self.program, self.spec, self._process)
            self._process = None
        if self.owns_pool:
            self.pool.close()


# --- the start-up check ------------------------------------------------------------------------

def check_programs(programs, settings: ProcessSettings) -> dict:
    """Start each Program once, exchange hello, quit: {program: its hello}. StartupError naming the
    program's origin for the first one that does not start or answer. All are started at once, so
    the check takes about the slowest start."""
    processes = [BotProcess(program, settings) for program in dict.fromkeys(programs)]
    try:
        for process in processes:
            _named(process, process.spawn)
        return {process.program: _named(process, process.handshake) for process in processes}
    finally:
        for process in processes:
            process.quit()
        for process in processes:
            process.stop()


def _named(process: BotProcess, step):
    try:
        return step()
    except BotFailure as exc:
        stderr = f" (stderr: {' | '.join(exc.stderr.splitlines()[-3:])})" if exc.stderr else ""
        raise StartupError(f"{process.program.origin}: the bot {exc}{stderr}") from None


__all__ = ["Program", "Declared", "ProcessSettings", "ProcessPool", "ExternalBot", "BotProcess",
           "BotFailure", "BotTimeout", "BotExited", "BotProtocolError", "IllegalAnswer",
           "StartupError", "load_toml", "serve_program", "check_programs", "kill_group", "die_with_parent",
           "DEFAULT_MOVE_TIME_MARGIN", "DEFAULT_STARTUP_TIMEOUT"]
