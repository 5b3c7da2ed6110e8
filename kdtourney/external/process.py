"""One bot process and the harness's side of KDTP/1 with it (docs/protocol.md).

    BotProcess        `start` (`spawn`, then `handshake`: hello), `send` and `receive` lines
                      with deadlines, `expect_silence`, `freeze` and `thaw` it (sandboxed),
                      `fail`, `quit`, `stop`; its output and log are kdtourney.external.output's
    ProcessSettings   the clock, margin, start-up timeout, log folder, sandbox, idle processes
    BotFailure        a bot's broken contract (kdtourney.errors.BotFailure) with its last stderr
                      lines: BotTimeout, BotExited (BotOutOfMemory), BotProtocolError,
                      IllegalAnswer, BotOutputFlood; the arena makes each a fault
    StartupError      a program that does not start or answer hello (a UserError)

Replies are waited for through a selector with a deadline, never a blocking read; a pidfd tells
at once that the bot exited, even while a child holds its pipes. A bot that exits fails where
its answer is read, whether its exit came before or after the line it was sent.
"""

from __future__ import annotations

import json
import os
import select
import selectors
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass

from kdtourney import errors
from kdtourney.bots.clock import TimeControl
from kdtourney.errors import UserError
from kdtourney.external import cgroups, kdtp
from kdtourney.external.declaration import Program
from kdtourney.external.launch import kill_group, start_process
from kdtourney.external.output import READ_BYTES, BotOutput
from kdtourney.external.sandbox import Confinement, Sandbox

DEFAULT_MOVE_TIME_MARGIN = 0.2   # s the harness waits beyond --move-time-limit (pipes, scheduler)
DEFAULT_STARTUP_TIMEOUT = 20.0   # s for a new process to answer hello (a JVM, a network loading)
DEFAULT_IDLE_PROCESSES = 8       # bot processes a worker keeps idle (a served Python bot: ~100 MB)
QUIT_GRACE = 2.0                 # s a bot has to exit after quit before it is killed
EXIT_GRACE = 1.0                 # s from an exiting bot closing its pipes to its exit status
WRITE_TIMEOUT = 5.0              # s a message without an answer (game, result) may take to write


# --- failures ----------------------------------------------------------------------------------

class BotFailure(errors.BotFailure):
    """A bot process failed (a kdtourney.errors.BotFailure); `stderr`: its last stderr lines
    (may be empty)."""

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


class BotOutOfMemory(BotExited):
    """Killed by the kernel past its sandbox's memory limit."""


class BotOutputFlood(BotFailure):
    """Wrote more than its sandbox's output limit in one game (stdout and stderr)."""


class StartupError(UserError):
    """A program that does not start or does not answer hello; one line naming its origin."""


# --- settings ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class ProcessSettings:
    """How out-of-process bots are run. clock: the time control, told to the bot in `game`
    (kdtourney.bots.clock; what each decision may take comes with it, `view.time_left`);
    margin: seconds waited beyond what a decision may take; startup_timeout: seconds for hello;
    log_dir: the folder of the entrants' stderr logs (None: only the last lines are kept, for
    faults); sandbox: every process inside one, with its limits (kdtourney.external.sandbox;
    None: none); idle_processes: how many processes a pool keeps waiting for a next game."""

    clock: TimeControl | None = None
    margin: float = DEFAULT_MOVE_TIME_MARGIN
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    log_dir: str | None = None
    sandbox: Sandbox | None = None
    idle_processes: int = DEFAULT_IDLE_PROCESSES


# --- one bot process ---------------------------------------------------------------------------

class BotProcess:
    """One running bot: its pipes, its output (`output`: stderr, log, output limit) and the
    harness's side of the exchange."""

    def __init__(self, program: Program, settings: ProcessSettings, log_path: str | None = None):
        self.program, self.settings = program, settings
        self.proc: subprocess.Popen | None = None
        self.hello: dict | None = None
        self.game: int | None = None         # the game being played (for the log)
        self.deals: set = set()              # the deal seeds of every game it was sent
        self.allowed: float | None = None    # seconds the decision asked for may take
        self.broken = False
        self._buffer = bytearray()
        self._scanned = 0                    # bytes of the buffer known to hold no newline
        self._selector: selectors.BaseSelector | None = None
        self._pidfd: int | None = None
        self.stopped = False
        self.started_at = 0.0
        self.confinement: Confinement | None = None  # its sandbox, if any
        limit = None if settings.sandbox is None else settings.sandbox.limits.output_bytes
        # past its limit the bot is killed (then it fails, `fail`)
        self.output = BotOutput(log_path, limit, self._kill_flooding,
                                lambda: f"[pid {self.pid} game {self.game}] ")

    def _kill_flooding(self) -> None:
        assert self.proc is not None  # output is counted only once the process runs
        kill_group(self.proc.pid)

    # starting

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and not self.broken and self.exit_code() is None

    def exit_code(self) -> int | None:
        """The exit status (negative: the signal that killed it), None while it runs. The process
        is not reaped before `stop`: until then its pid, and so its process group's id, cannot
        be given to another process, and killing the group cannot hit a stranger."""
        assert self.proc is not None  # asked only of a started process
        if self.proc.returncode is not None:
            return self.proc.returncode
        try:
            info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return self.proc.poll()
        if info is None:
            return None
        return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status

    def wait_exit(self, timeout: float) -> bool:
        """Wait up to `timeout` seconds for the process to exit, without reaping it."""
        deadline = time.monotonic() + timeout
        while self.exit_code() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self._pidfd is not None:
                select.select([self._pidfd], [], [], left)
            else:
                time.sleep(min(left, 0.01))
        return True

    def start(self) -> dict:
        """Start the process and exchange hello; returns the bot's hello. BotExited (could not
        start, exited), BotTimeout (no hello within the start-up timeout), BotProtocolError."""
        self.spawn()
        return self.handshake()

    def spawn(self) -> None:
        """Start the process (BotExited if it cannot be), its stderr drain and its log."""
        try:
            argv = None
            if self.settings.sandbox is not None:
                self.confinement = self.settings.sandbox.confine(self.program)
                argv = self.confinement.argv()
            self.proc = proc = start_process(self.program, argv)
        except OSError as exc:
            self.broken = True
            if self.confinement is not None:
                self.confinement.release()
            command = shlex.join(self.program.declared or self.program.command)
            raise BotExited(f"cannot start {command}: {exc.strerror or exc}") from None
        self.started_at = time.monotonic()
        # start_process pipes all three
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.output.drain(proc.stderr.fileno(), f"kdtourney-stderr-{proc.pid}")
        os.set_blocking(proc.stdout.fileno(), False)
        os.set_blocking(proc.stdin.fileno(), False)
        self._selector = selector = selectors.DefaultSelector()
        selector.register(proc.stdout.fileno(), selectors.EVENT_READ, "out")
        try:
            self._pidfd = pidfd = os.pidfd_open(proc.pid)
            selector.register(pidfd, selectors.EVENT_READ, "exit")
        except (AttributeError, OSError):
            self._pidfd = None

    def handshake(self) -> dict:
        """hello and its answer, within the start-up timeout counted from the start."""
        deadline = self.started_at + self.settings.startup_timeout
        self.send(kdtp.encode(kdtp.hello()), deadline, "hello")
        answer = self.receive(deadline, "hello")
        if answer["type"] != "hello" or not isinstance(answer.get("name"), str):
            self.fail(BotProtocolError, f"answered {show(answer)} to hello, not "
                                        '{"type": "hello", "name": ...}')
        self.hello = {k: answer.get(k) for k in ("name", "version", "author")}
        self.freeze()
        return self.hello

    def freeze(self) -> None:
        """Sandboxed: stop all the bot's processes until `thaw` (once they are stopped this
        returns; where the machine has no freezer, nothing happens). A bot that could not be
        stopped in time (a process of it in uninterruptible sleep) is killed: BotExited."""
        if self.confinement is not None and not self.confinement.freeze():
            self.fail(BotExited, f"could not be frozen between its decisions within "
                                 f"{cgroups.FREEZE_TIMEOUT:g} s (a process of it would not "
                                 "stop): its sandbox ended it")

    def thaw(self) -> None:
        """Sandboxed: let the bot's processes run again."""
        if self.confinement is not None:
            self.confinement.thaw()

    # talking

    def send(self, line: bytes, deadline: float | None, what: str) -> None:
        """Write one line before `deadline` (monotonic seconds, None: no limit)."""
        assert self.proc is not None and self.proc.stdin is not None  # spawn piped it
        fd = self.proc.stdin.fileno()
        view = memoryview(line)
        while view:
            try:
                view = view[os.write(fd, view):]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                self._unread(what)
                return
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                self.fail(BotTimeout, f"does not read its input (while sending {what})")
            with selectors.DefaultSelector() as writing:
                writing.register(fd, selectors.EVENT_WRITE)
                writing.select(left)

    def _unread(self, what: str) -> None:
        """The bot's input is closed, so `what` is lost. A bot that exits fails where its answer
        is read, as when the line was written just before its exit: how it fails does not depend
        on when it exited. One still running EXIT_GRACE later has stopped reading its input."""
        if not self.wait_exit(EXIT_GRACE):
            self.fail(BotExited, f"stopped reading its input (while sending {what})")

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
                self.fail(BotProtocolError, f"wrote {show(message)} before it was asked for {what}")

    def _message(self, line: bytes, what: str) -> dict | None:
        """The message of a line; None for a `log` message, which goes to the log."""
        try:
            message = kdtp.decode(line)
        except kdtp.ProtocolError as exc:
            self.fail(BotProtocolError, f"answered {what} with {exc}")
        if message["type"] == "log":
            self.output.log(f"log: {message.get('text')}".encode(errors="replace"))
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
            assert self._selector is not None  # spawn made it
            events = self._selector.select(left)
            if self._read_stdout(what):
                continue
            exited = any(key.data == "exit" for key, _ in events) or (
                self._pidfd is None and self.exit_code() is not None)
            if exited:
                self._read_stdout(what)
                if b"\n" not in self._buffer:
                    code = self.exit_code()
                    assert code is not None  # it exited: its status is there, not yet reaped
                    self.fail(BotExited, f"{ended(code)} (while asked for {what})")

    def _read_stdout(self, what) -> bool:
        """Append what stdout has to the buffer; True if anything came. EOF: BotExited."""
        got = False
        assert self.proc is not None and self.proc.stdout is not None  # spawn piped it
        while len(self._buffer) <= kdtp.MAX_LINE:
            try:
                chunk = os.read(self.proc.stdout.fileno(), READ_BYTES)
            except BlockingIOError:
                return got
            if not chunk:
                if got:
                    return True
                if not self.wait_exit(EXIT_GRACE):
                    self.fail(BotExited, f"closed its standard output (while asked for {what})")
                code = self.exit_code()
                assert code is not None  # wait_exit saw it exit
                self.fail(BotExited, f"{ended(code)} (while asked for {what})")
            self._buffer += chunk
            self.output.count(len(chunk))
            got = True
            if len(chunk) < READ_BYTES:  # the pipe is empty now (a read takes what a pipe has)
                return True
        return got

    def _late(self, what: str) -> str:
        if what == "hello":
            return f"did not answer hello within the start-up timeout of " \
                   f"{self.settings.startup_timeout:g} s"
        return f"no answer to {what} within its {self.allowed:.3f} s + " \
               f"{self.settings.margin:g} s margin"

    def fail(self, kind: type, message: str):
        """Kill the bot (it is restarted for the next game) and raise `kind` with its stderr; a
        sandboxed bot killed by a limit raises that limit's failure instead."""
        self.broken = True
        self.stop(grace=0, release=False)
        if self.settings.sandbox is not None:  # only a sandbox sets limits (output included)
            limits = self.settings.sandbox.limits
            if self.output.flooded:
                kind, message = BotOutputFlood, f"wrote more than its output limit of " \
                                                f"{limits.output_mib} MiB in one game ({message})"
            elif kind is BotExited and self.confinement is not None \
                    and self.confinement.out_of_memory():
                kind, message = BotOutOfMemory, f"was killed past its memory limit of " \
                                                f"{limits.memory_mib} MiB ({message})"
            elif self.confinement is not None and self.confinement.hit_process_limit():
                message += f" (it reached its limit of {limits.processes} processes)"
        if self.confinement is not None:
            self.confinement.release()
        raise kind(message, self.stderr_tail())

    def new_game(self, game: int, deals=()) -> None:
        """A game starts: its index for the log, its deal seeds, its output counted from zero."""
        self.game, self.output.written = game, 0
        self.deals.update(deals)

    def stderr_tail(self) -> str:
        """The bot's last stderr lines (kdtourney.external.output.BotOutput.tail)."""
        return self.output.tail(self.proc is not None and self.exit_code() is not None)

    # stopping

    def quit(self) -> None:
        """Ask the bot to exit (no waiting)."""
        if self.alive():
            self.thaw()
            try:
                self.send(kdtp.encode(kdtp.quit_message()), time.monotonic() + 0.2, "quit")
            except BotFailure:
                pass

    def stop(self, grace: float = QUIT_GRACE, release: bool = True) -> None:
        """Wait up to `grace` seconds for the bot to exit, then kill its process group; reap it;
        remove its sandbox (with `release`: `fail` reads the sandbox's verdict first).
        Once only: afterwards its pid may belong to another process."""
        if self.proc is None or self.stopped:
            return
        self.stopped = self.broken = True
        self.wait_exit(grace)
        if self.proc.returncode is None:  # not reaped yet: the group id is still its own
            kill_group(self.proc.pid)  # the group: children it started go too
        if self.confinement is not None:  # all of its sandbox, frozen or not
            self.confinement.kill()
        try:
            self.proc.wait(5)  # reaped only now
        except subprocess.TimeoutExpired:
            pass
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        for stream in (self.proc.stdin, self.proc.stdout):
            assert stream is not None  # spawn piped both
            try:
                stream.close()
            except OSError:
                pass
        if self.output.close() and self.proc.stderr is not None:
            self.proc.stderr.close()
        if release and self.confinement is not None:
            self.confinement.release()


def ended(code: int) -> str:
    """How a process that exited with `code` (negative: the signal that killed it) ended."""
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def show(message) -> str:
    """A message for an error line: its JSON, cut at 80 characters."""
    text = json.dumps(message)
    return text if len(text) <= 80 else text[:77] + "..."
