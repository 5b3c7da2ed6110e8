"""The harness's private temporary folder: `<temporary folder>/kdtourney-<uid>`, mode 0700, this
user's own. Everything kdtourney keeps there (the workers' CPU tickets, the sandboxes' uid slots,
the compiled system call filter, the bots' unpacked sources and snapshots, a pool's files) no
other user can read, replace or plant, where a file of a shared /tmp could be a link another user
laid to make the harness write or read elsewhere. Files are opened without following links."""

from __future__ import annotations

import os
import stat
import tempfile

from kdtourney.errors import UserError

PREFIX = "kdtourney-"


class NotPrivate(OSError, UserError):
    """The private folder's place holds something this user does not own alone; one line (an
    OSError, as other failures to make a folder are)."""


def folder(*sub: str) -> str:
    """The private folder (or the folder `sub` inside it), made if missing; NotPrivate when the
    place is taken by a link, a file, or a folder of another user or open to others."""
    base = os.path.join(tempfile.gettempdir(), f"{PREFIX}{os.geteuid()}")
    paths = [base, *(os.path.join(base, *sub[:i + 1]) for i in range(len(sub)))]
    for path in paths:
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() \
                or info.st_mode & 0o077:
            raise NotPrivate(f"{path} should be a folder of {os.geteuid()}'s only (mode 0700), "
                             "kdtourney's private temporary folder, but is not (another user may "
                             "have made it first): remove it, or set TMPDIR to a folder of your "
                             "own")
    return paths[-1]


def open_file(path: str, flags: int = os.O_RDWR | os.O_CREAT, mode: int = 0o600) -> int:
    """os.open of a file of the private folder, refusing a link (O_NOFOLLOW)."""
    return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)


__all__ = ["folder", "open_file", "NotPrivate"]
