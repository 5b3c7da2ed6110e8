"""The lock of a tournament folder, held while a command plays into it.

    locked(folder)    a context manager; StoreError (one line) if another process holds it

An flock on `<folder>/tournament.lock` (made if needed, with the holder's process id inside for
the message): the kernel releases it when its process ends, however it ends, so a killed run
leaves no lock behind. Reentrant within a process (an SPRT holds it around its chunks' runs).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from kdtourney.store.schema import LOCK_FILE, StoreError, check, exists, store_path

_HELD: dict[str, list] = {}  # lock file -> [descriptor, holds] of the locks this process holds


@contextlib.contextmanager
def locked(folder):
    """Hold the lock of `folder` for the block: a second process gets StoreError instead of
    writing the same games. An existing store is checked first (read only), so a foreign folder
    gets no lock file."""
    folder = Path(folder)
    if exists(folder):
        check(store_path(folder))
    else:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder {folder}: {exc.strerror}") from None
    key = str((folder / LOCK_FILE).resolve())
    if key not in _HELD:
        _HELD[key] = [_take(key, folder), 0]
    _HELD[key][1] += 1
    try:
        yield
    finally:
        _HELD[key][1] -= 1
        if not _HELD[key][1]:
            fd = _HELD.pop(key)[0]
            os.ftruncate(fd, 0)
            os.close(fd)  # releases the lock


def _take(key: str, folder: Path) -> int:
    """The descriptor of the lock file `key`, locked, with this process's id inside."""
    try:
        fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise StoreError(f"cannot create {key}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        os.close(fd)
        raise StoreError(f"{folder} is in use: another kdtourney run "
                         + (f"(process {holder}) " if holder.isdigit() else "")
                         + "is playing into it; wait for it to end, or choose another --out"
                         ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    return fd
