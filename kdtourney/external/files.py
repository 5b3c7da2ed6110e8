"""Which files of a folder are a bot's, reading them as a submission, and a digest over files.
One rule wherever a bot's files are listed (shipped, hashed, shown in a sandbox, watched): all
under its folder but caches, hidden entries, logs and tournament folders (docs/bots.md).

    tree, left_out, is_run_folder  the files of a folder by that rule
    read_file, read_beneath        one file, at most `limit` bytes, never blocking: Unreadable
                                   (a UserError, one line) for a FIFO, socket, device or a file
                                   past the limit; read_beneath through no link
    layout, read_tree              a folder's files and links (`Link`), no link followed
    files_sha256                   a sha256 over (name, bytes or Link) pairs
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from kdtourney.errors import UserError

STORE = "tournament.sqlite"  # a folder holding one is a tournament folder, not a bot's code
LOG_SUFFIX = ".log"


def left_out(name: str) -> bool:
    """Whether a file or folder named `name` is left out of a bot's files (see the module
    docstring; a tournament folder is told by its content, see `is_run_folder`)."""
    return name.startswith(".") or name == "__pycache__" or name.endswith((".pyc", LOG_SUFFIX))


def is_run_folder(path) -> bool:
    return os.path.isfile(os.path.join(path, STORE))


def tree(root: Path) -> list[Path]:
    """`root` itself if it is a file, else every file under it but what is left out, sorted.
    Links to folders are not followed; a link to a file is listed (callers that must keep a bot
    to its folder check where it leads)."""
    root = Path(root)
    if root.is_file():
        return [root]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not left_out(d)
                         and not is_run_folder(os.path.join(folder, d)))
        found += [Path(folder, f) for f in files if not left_out(f)]
    return sorted(found)


class Unreadable(UserError):
    """A file of a submission that is not read: not a regular file, or past its limit; one line
    naming it."""


@dataclass(frozen=True)
class Link:
    """A symbolic link of a bot's folder, as it reads (`target`), never followed by the harness."""

    target: str

    def leads_to(self, name: str) -> str | None:
        """The path of the folder the link `name` leads to (relative to the folder), None when it
        leads out of it (an absolute target, or one climbing above the folder)."""
        if os.path.isabs(self.target):
            return None
        found = os.path.normpath(os.path.join(os.path.dirname(name), self.target))
        return None if found == ".." or found.startswith("../") else found


def _what(mode: int) -> str:
    for test, what in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a link")):
        if test(mode):
            return what
    return "not a file"


def mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB" if size < 1 << 30 else f"{size / (1 << 30):.1f} GiB"


def _read_fd(fd: int, shown, limit: int) -> bytes:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable(f"{shown} is {_what(info.st_mode)}, not a regular file: kdtourney does "
                         "not read it")
    if info.st_size > limit:
        raise Unreadable(f"{shown} holds {mib(info.st_size)}, over the {mib(limit)} kdtourney "
                         "reads of it")
    chunks, size = [], 0
    while size <= limit:  # a file growing meanwhile is cut at the limit, then refused
        chunk = os.read(fd, min(1 << 20, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        raise Unreadable(f"{shown} grew past the {mib(limit)} kdtourney reads of it")
    return b"".join(chunks)


_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def read_file(path, limit: int) -> bytes:
    """The bytes of the file `path` (links followed), at most `limit` of them: Unreadable when it
    is not a regular file (opened without waiting: a FIFO gives nothing) or holds more."""
    fd = os.open(path, _FLAGS)
    try:
        return _read_fd(fd, path, limit)
    finally:
        os.close(fd)


def read_beneath(root, name: str, limit: int) -> bytes:
    """`read_file` of `root`/`name` through folders none of which is a link, nor is the file."""
    *folders, last = Path(name).parts
    fds = [os.open(root, _FLAGS | os.O_DIRECTORY)]
    try:
        for folder in folders:
            fds.append(os.open(folder, _FLAGS | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fds[-1]))
        fds.append(os.open(last, _FLAGS | os.O_NOFOLLOW, dir_fd=fds[-1]))
        return _read_fd(fds[-1], os.path.join(root, name), limit)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Unreadable(f"{os.path.join(root, name)} is a link, or lies past one: "
                             "kdtourney reads a bot's files where they lie, not through a "
                             "link") from None
        raise
    finally:
        for fd in fds:
            os.close(fd)


def layout(root: Path, named=None) -> dict[str, Link | None]:
    """{name relative to `root`: None for a file, or its Link} of what `tree` would list, links
    to folders included and followed by nothing; named: only the paths at or under those names
    (relative), and what the links among them lead to inside `root`."""
    root = Path(root)
    found: dict[str, Link | None] = {}
    for folder, dirs, files in os.walk(root):
        base = Path(folder).relative_to(root)
        keep = []
        for entry in sorted(dirs):
            path = os.path.join(folder, entry)
            if left_out(entry) or is_run_folder(path):
                continue
            if os.path.islink(path):
                found[(base / entry).as_posix()] = Link(os.readlink(path))
            else:
                keep.append(entry)
        dirs[:] = keep
        for entry in files:
            if not left_out(entry):
                path = os.path.join(folder, entry)
                found[(base / entry).as_posix()] = \
                    Link(os.readlink(path)) if os.path.islink(path) else None
    if named is None:
        return found
    wanted = {os.path.normpath(n) for n in named}
    todo = list(wanted)
    while todo:  # what the links among the wanted lead to inside the folder
        name = todo.pop()
        for key, link in found.items():
            if link is not None and (key == name or key.startswith(f"{name}/")) \
                    and (target := link.leads_to(key)) is not None and target not in wanted:
                wanted.add(target)
                todo.append(target)
    return {key: link for key, link in found.items()
            if any(key == n or key.startswith(f"{n}/") or n == "." for n in wanted)}


def read_tree(root, limit: int, named=None):
    """(name, bytes or Link) of each file and link of `layout(root, named)`, in name order, the
    files read through `read_beneath`: Unreadable for one that is not a regular file, or when
    they hold more than `limit` bytes together."""
    total = 0
    for name, link in sorted(layout(root, named).items()):
        if link is not None:
            yield name, link
            continue
        data = read_beneath(root, name, limit)
        total += len(data)
        if total > limit:
            raise Unreadable(f"{root}: the bot's files hold more than the {mib(limit)} "
                             "kdtourney reads of them")
        yield name, data


def files_sha256(files) -> str:
    """sha256 over (relative name, bytes or Link) pairs, in name order: names and contents count
    (and where a link leads), not where the files are."""
    h = hashlib.sha256()
    for name, data in sorted(files, key=lambda pair: pair[0]):
        if isinstance(data, Link):
            data = b"link\0" + data.target.encode("utf-8", "surrogateescape")
        h.update(name.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


__all__ = ["tree", "left_out", "is_run_folder", "files_sha256", "STORE", "Unreadable", "Link",
           "read_file", "read_beneath", "read_tree", "layout", "mib"]
