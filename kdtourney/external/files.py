"""Which files of a folder are a bot's, reading them as a submission, and a digest over files.
One rule wherever a bot's files are listed (shipped, hashed, shown in a sandbox, watched): all
under its folder but caches, hidden entries, logs and tournament folders (docs/bots.md), read
without recursion, MAX_DEPTH folders deep and within the organiser's bounds.

    tree, layout, walk          the files of a folder by that rule (`layout`: with its links,
                                `Link`, none followed); TooMany (an Unreadable) past a bound
    submission_limits           the organiser's bounds on a bot's files (entries, bytes)
    left_out, is_run_folder     the rule
    read_file, read_beneath     one file, at most `limit` bytes, never blocking: Unreadable
                                (a UserError, one line) for a FIFO, socket, device or a file
                                past the limit; read_beneath through no link (`on_file`)
    read_tree                   a folder's files and links, read that way
    real, inside                os.path.realpath without recursion (at most LINKS links)
    files_sha256                a sha256 over (name, bytes, Link or a file's digest) pairs
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
MAX_DEPTH = 32        # folders nested in a bot's folder that kdtourney reads
MAX_FILES = 10_000    # entries (files, folders, links) of a bot's folder read, by default
MAX_BYTES = 1 << 30   # bytes of a bot's files read (hashed, copied), by default
FILES_ENV, MIB_ENV = "KDTOURNEY_SUBMISSION_FILES", "KDTOURNEY_SUBMISSION_MIB"  # the organiser's
LIMIT = -1            # a bound meaning: the organiser's (`submission_limits`)
LINKS = 40            # links followed in one path, as the kernel does
FILE, FOLDER, LINK, FOLDER_LINK = "file", "folder", "link", "folder link"


def left_out(name: str) -> bool:
    """Whether a file or folder named `name` is left out of a bot's files (see the module
    docstring; a tournament folder is told by its content, see `is_run_folder`)."""
    return name.startswith(".") or name == "__pycache__" or name.endswith((".pyc", LOG_SUFFIX))


def is_run_folder(path) -> bool:
    return os.path.isfile(os.path.join(path, STORE))


class Unreadable(UserError):
    """A file of a submission that is not read: not a regular file, or past its limit; one line
    naming it."""


class TooMany(Unreadable):
    """A folder nested deeper than MAX_DEPTH, or holding more entries than kdtourney reads."""


class LimitError(UserError):
    """A limit of the environment that is not a whole number above 0."""


def submission_limits() -> tuple[int, int]:
    """(entries, bytes) of a bot's files that kdtourney reads: KDTOURNEY_SUBMISSION_FILES (else
    MAX_FILES) and KDTOURNEY_SUBMISSION_MIB (MiB, else MAX_BYTES); LimitError for a bad value."""
    found = []
    for name, default, scale in ((FILES_ENV, MAX_FILES, 1), (MIB_ENV, MAX_BYTES, 1 << 20)):
        text = os.environ.get(name, "").strip()
        if not text:
            found.append(default)
            continue
        if not text.isdigit() or int(text) < 1:
            raise LimitError(f"{name}={text!r}: a limit is a whole number above 0")
        found.append(int(text) * scale)
    return found[0], found[1]


def walk(root, files: int | None = LIMIT, depth: int = MAX_DEPTH) -> dict[str, str]:
    """{name relative to `root`: FILE, LINK, FOLDER_LINK or FOLDER} of what lies under the
    folder `root` but what is left out, folders visited one after another (no recursion), none
    through a link. TooMany when a folder lies more than `depth` below `root`, or when the
    folders visited hold more than `files` entries (None: no bound; LIMIT: the organiser's,
    `submission_limits`), left-out ones included."""
    root = os.fspath(root)
    if files == LIMIT:
        files = submission_limits()[0]
    found: dict[str, str] = {}
    seen, todo = 0, [("", 0)]
    while todo:
        rel, level = todo.pop()
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as entries:
                for entry in entries:
                    seen += 1
                    if files is not None and seen > files:
                        raise TooMany(f"{root} holds more than {files:,} files and folders, "
                                      "more than kdtourney reads of a bot's folder")
                    if left_out(entry.name):
                        continue
                    key = f"{rel}/{entry.name}" if rel else entry.name
                    kind = _kind(entry)
                    if kind == FOLDER and level >= depth:
                        raise TooMany(f"{root} holds folders nested more than {depth} deep, "
                                      "deeper than kdtourney reads a bot's folder")
                    if kind is not None:
                        found[key] = kind
                    if kind == FOLDER:
                        todo.append((key, level + 1))
        except TooMany:
            raise
        except OSError:  # a folder this user may not read (or gone meanwhile): as os.walk does
            continue
    return found


def _kind(entry: os.DirEntry) -> str | None:
    """FILE, LINK, FOLDER_LINK or FOLDER; None for a tournament folder."""
    try:
        is_folder = entry.is_dir()  # through a link, as os.walk sorts them
        is_link = entry.is_symlink()
    except OSError:
        return FILE
    if is_folder and is_run_folder(entry.path):
        return None
    if is_link:
        return FOLDER_LINK if is_folder else LINK
    return FOLDER if is_folder else FILE


def tree(root: Path, files: int | None = LIMIT) -> list[Path]:
    """`root` itself if it is a file, else every file under it but what is left out, sorted.
    Links to folders are not followed; a link to a file is listed (callers that must keep a bot
    to its folder check where it leads). TooMany past the bounds of `walk`."""
    root = Path(root)
    if root.is_file():
        return [root]
    return sorted(root / name for name, kind in walk(root, files).items()
                  if kind in (FILE, LINK))


def real(path) -> str:
    """os.path.realpath(path), resolved step by step rather than by recursion: Unreadable for a
    path through more than LINKS links (the kernel would not follow them either)."""
    done, hops = "/", 0
    todo = list(reversed(os.path.abspath(path).split("/")))
    while todo:
        part = todo.pop()
        if part in ("", "."):
            continue
        if part == "..":
            done = os.path.dirname(done)
            continue
        here = os.path.join(done, part)
        try:
            target = os.readlink(here)
        except OSError:  # not a link, or not there: taken as it is (as realpath does)
            done = here
            continue
        hops += 1
        if hops > LINKS:
            raise Unreadable(f"{path} leads through more than {LINKS} links: kdtourney does "
                             "not follow them")
        if os.path.isabs(target):
            done = "/"
        todo += reversed(target.split("/"))
    return done


def inside(path, folder) -> bool:
    """Whether `path` lies in `folder` (or is it), both with their links resolved (`real`); False
    for a path through too many links."""
    try:
        return Path(real(path)).is_relative_to(real(folder))
    except Unreadable:
        return False


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


def regular(fd: int, shown, limit: int) -> os.stat_result:
    """The fstat of the open file `fd`: Unreadable when it is not a regular file or holds more
    than `limit` bytes (`shown`: its name in the message)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise Unreadable(f"{shown} is {_what(info.st_mode)}, not a regular file: kdtourney does "
                         "not read it")
    if info.st_size > limit:
        raise Unreadable(f"{shown} holds {mib(info.st_size)}, over the {mib(limit)} kdtourney "
                         "reads of it")
    return info


def chunks(fd: int, shown, limit: int, size: int = 1 << 20):
    """The bytes of the open file `fd` in chunks of at most `size`: Unreadable once more than
    `limit` of them come (a file growing meanwhile is cut at the limit, then refused)."""
    total = 0
    while total <= limit:
        chunk = os.read(fd, min(size, limit + 1 - total))
        if not chunk:
            return
        total += len(chunk)
        if total > limit:
            break
        yield chunk
    raise Unreadable(f"{shown} grew past the {mib(limit)} kdtourney reads of it")


def _read_fd(fd: int, shown, limit: int) -> bytes:
    regular(fd, shown, limit)
    return b"".join(chunks(fd, shown, limit))


FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def read_file(path, limit: int) -> bytes:
    """The bytes of the file `path` (links followed), at most `limit` of them: Unreadable when it
    is not a regular file (opened without waiting: a FIFO gives nothing) or holds more."""
    return on_file(_read_fd, path, None, limit)


def on_file(use, root, name: str | None, limit: int):
    """use(fd, path, limit) of the file `root` (links followed) or, given `name`, of `root`/`name`
    (`open_beneath`: through no link), open for the call."""
    if name is None:
        fd, path = os.open(root, FLAGS), root
    else:
        fd, path = open_beneath(root, name), os.path.join(root, name)
    try:
        return use(fd, path, limit)
    finally:
        os.close(fd)


def open_beneath(root, name: str) -> int:
    """A descriptor of `root`/`name` opened (FLAGS) through folders none of which is a link, nor
    is the file: Unreadable when one is."""
    *folders, last = Path(name).parts
    fds = [os.open(root, FLAGS | os.O_DIRECTORY)]
    try:
        for folder in folders:
            fds.append(os.open(folder, FLAGS | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fds[-1]))
        fds.append(os.open(last, FLAGS | os.O_NOFOLLOW, dir_fd=fds[-1]))
        return fds.pop()
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Unreadable(f"{os.path.join(root, name)} is a link, or lies past one: "
                             "kdtourney reads a bot's files where they lie, not through a "
                             "link") from None
        raise
    finally:
        for fd in fds:
            os.close(fd)


def read_beneath(root, name: str, limit: int) -> bytes:
    """`read_file` of `root`/`name` through folders none of which is a link, nor is the file."""
    return on_file(_read_fd, root, name, limit)


def layout(root: Path, named=None, files: int | None = LIMIT) -> dict[str, Link | None]:
    """{name relative to `root`: None for a file, or its Link} of what `tree` would list, links
    to folders included and followed by nothing; named: only the paths at or under those names
    (relative; only those are walked), and what the links among them lead to inside `root`.
    TooMany past the bounds of `walk`, over all the names."""
    root = Path(root)
    wanted = None if named is None else {os.path.normpath(n) for n in named}
    if wanted is None or "." in wanted:
        return _linked(root, walk(root, files))
    found: dict[str, Link | None] = {}
    files = submission_limits()[0] if files == LIMIT else files
    todo = sorted(wanted)
    while todo:  # each name, then what the links among them lead to inside the folder
        kinds = _at(root, todo.pop(), None if files is None else files - len(found))
        for key, link in _linked(root, kinds).items():
            found[key] = link
            if link is not None and (target := link.leads_to(key)) is not None \
                    and target not in wanted:
                wanted.add(target)
                todo.append(target)
    return dict(sorted(found.items()))


def _linked(root: Path, kinds: dict) -> dict[str, Link | None]:
    return {name: None if kind == FILE else Link(os.readlink(root / name))
            for name, kind in sorted(kinds.items()) if kind != FOLDER}


def _at(root: Path, name: str, files: int | None) -> dict[str, str]:
    """`walk`'s entries at or under `name` (relative to `root`), found as `walk(root)` would
    find them: none under a left-out name, a link or a tournament folder."""
    parts = name.split("/")
    if name.startswith("..") or any(left_out(part) for part in parts):
        return {}
    path = root
    for part in parts[:-1]:
        path = path / part
        if path.is_symlink() or not path.is_dir() or is_run_folder(path):
            return {}
    path = path / parts[-1]
    if path.is_symlink():
        return {name: FOLDER_LINK if path.is_dir() else LINK}
    if path.is_dir():
        if is_run_folder(path):
            return {}
        depth = MAX_DEPTH - len(parts)
        return {f"{name}/{key}": kind for key, kind in walk(path, files, depth).items()}
    return {name: FILE} if path.exists() else {}


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


@dataclass(frozen=True)
class Digest:
    """A file's sha256 (`sha256`, the raw 32 bytes) and `size`, hashed as it streamed by."""

    sha256: bytes
    size: int


def files_sha256(files) -> str:
    """sha256 over (relative name, bytes, Digest or Link) pairs, in name order: names and
    contents count (and where a link leads), not where the files are."""
    h = hashlib.sha256()
    for name, data in sorted(files, key=lambda pair: pair[0]):
        if isinstance(data, Link):
            data = b"link\0" + data.target.encode("utf-8", "surrogateescape")
        digest = data.sha256 if isinstance(data, Digest) else hashlib.sha256(data).digest()
        h.update(name.encode("utf-8", "surrogateescape") + b"\0" + digest)
    return h.hexdigest()


__all__ = ["tree", "walk", "left_out", "is_run_folder", "files_sha256", "STORE", "Unreadable",
           "TooMany", "Link", "Digest", "read_file", "read_beneath", "open_beneath", "on_file",
           "regular",
           "chunks", "read_tree", "layout", "mib", "real", "inside", "MAX_DEPTH", "MAX_FILES",
           "MAX_BYTES", "LIMIT", "LimitError", "submission_limits",
           "LINKS", "FLAGS"]
