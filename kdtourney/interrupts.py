"""Ctrl-C that is never lost.

Python turns SIGINT into a KeyboardInterrupt at whatever line is running. Raised inside a weakref
callback or a `__del__` (which garbage collection runs anywhere), it is printed as "Exception
ignored" and dropped, and a long run goes on as if nothing had been pressed. While `caught()` is
in force (every `kdtourney` command), a Ctrl-C is also remembered, and the loops that wait for
games call `check()`, which raises it again.
"""

import contextlib
import signal
import threading

_PENDING = [False]


def _on_sigint(signum, frame):
    _PENDING[0] = True
    raise KeyboardInterrupt


@contextlib.contextmanager
def caught():
    """Remember every Ctrl-C for `check()` while the block runs. Only in the main thread, and only
    over Python's own handler (one set by someone else is left alone)."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _PENDING[0] = False


def check():
    """Raise KeyboardInterrupt if Ctrl-C was pressed inside `caught()` (again, if Python dropped
    it where it was first raised)."""
    if _PENDING[0]:
        raise KeyboardInterrupt


def from_ctrl_c() -> bool:
    """Whether the KeyboardInterrupt being handled may come from Ctrl-C; if not, some code (a
    bot's) raised it. Signals reach only the main thread; a worker ignores SIGINT; inside
    `caught()` a Ctrl-C is remembered before it is raised. Elsewhere it may always be Ctrl-C."""
    if threading.current_thread() is not threading.main_thread():
        return False
    handler = signal.getsignal(signal.SIGINT)
    if handler is signal.SIG_IGN:
        return False
    if handler is _on_sigint:
        return _PENDING[0]
    return True
