"""Starting a bot process: its own session (process group), pipes on stdin, stdout and stderr,
and on Linux SIGKILL when the process that started it dies (PR_SET_PDEATHSIG, set by util-linux's
`setpriv --pdeathsig` in the child: no Python code runs between fork and exec).

Killing a bot kills its group, so a child it started dies too and cannot keep a pipe open; the
pool reports its process groups (`track`) so that the parent of a dead worker can kill the bots'
children as well.
"""

from __future__ import annotations

import ctypes
import errno
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading

from kdtourney.external.declaration import Program

_PR_SET_PDEATHSIG = 1
_LIBC = None
_LAUNCHER = None
_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None


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


def _popen(argv: list, cwd: str) -> subprocess.Popen:
    if _SETPRIV:  # dies with the launcher thread; set by setpriv itself, no preexec_fn here
        argv = [_SETPRIV, "--pdeathsig", "KILL", "--", *argv]
    return subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, close_fds=True)


class _Launcher(threading.Thread):
    """Starts the bot processes. The parent-death signal is tied to the thread that forked, so
    the forking is done by this one thread, which lives as long as the process."""

    def __init__(self):
        super().__init__(name="kdtourney-bot-launcher", daemon=True)
        self.jobs: queue.Queue = queue.Queue()

    def run(self):
        while True:
            job, reply = self.jobs.get()
            try:
                reply.put((True, _popen(*job)))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                reply.put((False, exc))

    def start_process(self, argv: list, cwd: str) -> subprocess.Popen:
        reply: queue.Queue = queue.Queue(maxsize=1)
        self.jobs.put(((argv, cwd), reply))
        ok, value = reply.get()
        if not ok:
            raise value
        return value


def check_runnable(program: Program) -> None:
    """FileNotFoundError or PermissionError, as exec would give, when the program is not there."""
    if program.executable is None:
        first = program.command[0]
        if os.sep in first and os.path.exists(first):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), first)
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), first)


def start_process(program: Program, argv: list | None = None) -> subprocess.Popen:
    """Start `program` (or `argv` instead of its command, in its folder: a sandbox's) in its own
    session, pipes on stdin, stdout and stderr, killed when this process's launcher thread ends
    (where util-linux's setpriv is there)."""
    global _LAUNCHER
    check_runnable(program)
    if _LAUNCHER is None:
        _LAUNCHER = _Launcher()
        _LAUNCHER.start()
    return _LAUNCHER.start_process(list(argv or program.command), program.cwd)


def kill_group(pgid: int) -> None:
    """SIGKILL to every process of a bot's process group (gone already: nothing to do)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
