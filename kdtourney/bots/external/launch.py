"""Starting a bot process: its own session (process group), pipes on stdin, stdout and stderr,
and on Linux SIGKILL when the process that started it dies (PR_SET_PDEATHSIG).

Killing a bot kills its group, so a child it started dies too and cannot keep a pipe open; the
pool reports its process groups (`track`) so that the parent of a dead worker can kill the bots'
children as well.
"""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading

from kdtourney.bots.external.declaration import Program

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
