"""A submission's files hashed as they stream by, in bounded memory, and copied the same way.

    hash_fd, hash_beneath, hash_file  a file's `Digest` (its sha256 and size), read in chunks:
                                      Unreadable as kdtourney.external.files reads; the digest
                                      of an unchanged file (same inode, size, times) is kept
    hashed_tree                       (name, Digest or Link) of a folder's files (`layout`)
    copy_fd                           a copy of an open file, its holes kept as holes, and its
                                      Digest, both from one reading
"""

from __future__ import annotations

import hashlib
import os
import time

from kdtourney.external.files import (
    LIMIT,
    MIB_ENV,
    Digest,
    Unreadable,
    chunks,
    layout,
    mib,
    on_file,
    regular,
)

CHUNK = 1 << 20            # bytes read (and held) at a time
KNOWN = 100_000            # digests kept of files not changed since
SETTLED = 2.0              # s: a file changed more recently is hashed again (same-time writes)
_ZERO = bytes(CHUNK)
_known: dict[tuple, Digest] = {}


def _key(info: os.stat_result) -> tuple | None:
    """What tells a file unchanged: its device, inode, size and times; None for a file changed
    too recently (a write in the same clock tick would not show)."""
    if time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) < SETTLED * 1e9:
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def hash_fd(fd: int, shown, limit: int) -> Digest:
    """The Digest of the open file `fd`, at most `limit` bytes (Unreadable as
    kdtourney.external.files.regular and chunks say)."""
    key = _key(regular(fd, shown, limit))
    if key is not None and key in _known:
        return _known[key]
    h, size = hashlib.sha256(), 0
    for chunk in chunks(fd, shown, limit, CHUNK):
        h.update(chunk)
        size += len(chunk)
    found = Digest(h.digest(), size)
    if key is not None:
        if len(_known) >= KNOWN:
            _known.clear()
        _known[key] = found
    return found


def hash_file(path, limit: int) -> Digest:
    """`hash_fd` of the file `path`, links followed."""
    return on_file(hash_fd, path, None, limit)


def hash_beneath(root, name: str, limit: int) -> Digest:
    """`hash_fd` of `root`/`name`, through no link (kdtourney.external.files.open_beneath)."""
    return on_file(hash_fd, root, name, limit)


def hashed_tree(root, limit: int, named=None, files: int | None = LIMIT):
    """(name, Digest or Link) of each file and link of `layout(root, named, files)`, in name
    order, through no link: Unreadable for one that is not a regular file, or when they hold
    more than `limit` bytes together."""
    total = 0
    for name, link in sorted(layout(root, named, files).items()):
        if link is not None:
            yield name, link
            continue
        size = os.lstat(os.path.join(root, name)).st_size
        if size <= limit < total + size:  # (a file over the limit alone is named: hash_fd)
            raise over(total + size, limit, root)
        digest = hash_beneath(root, name, limit if size > limit else limit - total)
        total += digest.size
        yield name, digest


def copy_fd(fd: int, out: int, shown, limit: int) -> Digest:
    """Copy the open file `fd` into the empty file `out`, chunks of zeros left as holes, and
    return the Digest of what was copied (Unreadable past `limit` bytes)."""
    regular(fd, shown, limit)
    h, size = hashlib.sha256(), 0
    for chunk in chunks(fd, shown, limit, CHUNK):
        h.update(chunk)
        size += len(chunk)
        if chunk == _ZERO[:len(chunk)]:
            os.lseek(out, len(chunk), os.SEEK_CUR)
        else:
            view = memoryview(chunk)
            while view:
                view = view[os.write(out, view):]
    os.ftruncate(out, size)
    return Digest(h.digest(), size)


def over(total: int, limit: int, shown) -> Unreadable:
    """The error of files holding `total` bytes, over `limit`."""
    return Unreadable(f"{shown}: the bot's files hold {mib(total)} or more, over the "
                      f"{mib(limit)} kdtourney reads of them ({MIB_ENV} sets it)")


__all__ = ["hash_fd", "hash_file", "hash_beneath", "hashed_tree", "copy_fd", "over", "CHUNK"]
