"""The code identity of a bot declared by a TOML file: everything it can read when it runs
(docs/bots.md, "What counts as a bot's code").

    program_identity  {"kind": "kdtp", "command", "files_sha256", "bot_name", "bot_version"}
    program_files     (name, Digest or Link, inside its folder) of every file it hashes: its
                      own files (`own_paths`), what its command runs outside its folder
                      (`run_paths`: a relative program, file arguments, `python -m`'s package,
                      a Java class path) and its TOML's `files`, hashed as they stream by
    snapshot          the copy of its files inside its folder that its identity hashed, which
                      its sandbox shows in place of the folder (holes kept); FilesChanged (a
                      UserError) when a pinned bot's files changed since its run recorded them
    prune_snapshots   remove the snapshots unused for days that no stored tournament keeps
    inside            whether a path lies in a folder, links resolved (external.files)
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import tempfile
import time
from pathlib import Path

from kdtourney.errors import UserError
from kdtourney.external import private
from kdtourney.external.declaration import Program
from kdtourney.external.digests import copy_fd, hash_file, hashed_tree
from kdtourney.external.files import (
    Digest,
    Link,
    Unreadable,
    files_sha256,
    inside,
    open_beneath,
    real,
    submission_limits,
)

SNAPSHOT_DAYS = 2.0  # a snapshot not used for as long is pruned (`prune_snapshots`)

_CLASS_PATH = ("-cp", "-classpath", "--class-path")


def _module_paths(module: str, cwd: str) -> list[Path]:
    """Where `python -m module` finds the top-level package: the working directory, then this
    installation."""
    top = module.split(".")[0]
    for candidate in (Path(cwd, top), Path(cwd, top + ".py")):
        if candidate.exists():
            return [candidate]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [Path(p) for p in spec.submodule_search_locations]
    return [Path(spec.origin)] if spec.origin and os.path.isfile(spec.origin) else []


def run_paths(program: Program) -> list[Path]:
    """The paths the command names (a relative program, file arguments, `-m` package, class
    path; see the module docstring), and the TOML file's `files`."""
    declared = program.declared or program.command
    paths = []
    if os.sep in declared[0] and not os.path.isabs(declared[0]):
        paths.append(Path(program.command[0]))
    args = list(program.command[1:])
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "-m" and i + 1 < len(args):
            paths += _module_paths(args[i + 1], program.cwd)
            break  # what follows is the module's own arguments
        if arg in _CLASS_PATH and i + 1 < len(args):
            paths += [Path(program.cwd, p) for p in args[i + 1].split(os.pathsep) if p]
            i += 2
            continue
        if not arg.startswith("-") and Path(program.cwd, arg).exists():
            paths.append(Path(program.cwd, arg))
        i += 1
    return paths + [Path(program.cwd, p) for p in program.reads]


def own_paths(program: Program) -> list[Path]:
    """The paths of its folder that are the bot's: the folder itself when it is its own, else
    its TOML file and the paths in the folder that its command and `files` name (an absolute
    program in the folder too)."""
    if program.own_folder:
        return [Path(program.cwd)]
    named = [Path(program.origin), *run_paths(program)]
    if os.path.isabs(program.command[0]):
        named.append(Path(program.command[0]))
    return [p for p in named if inside(p, program.cwd)]


def program_files(program: Program):
    """(name, Digest or Link, inside) of every file of the bot's identity, in name order, hashed
    as they stream by (kdtourney.external.digests); a name is the path relative to the bot's
    folder (`../lib/x.jar` outside it), so a copy of the folder elsewhere is the same bot;
    inside: whether it lies in the folder. Unreadable (one line) for a file that is not a
    regular one, or past the organiser's bounds (kdtourney.external.files.submission_limits:
    entries of each folder read, bytes in all)."""
    folder = Path(program.cwd)
    resolved = real(folder)
    limit = submission_limits()[1]
    named = None if program.own_folder else [
        os.path.relpath(os.path.abspath(p), os.path.abspath(folder)) for p in own_paths(program)]
    found = [(name, data, True) for name, data in hashed_tree(folder, limit, named)]
    left, seen = limit - sum(d.size for _, d, _ in found if isinstance(d, Digest)), set()
    for root in run_paths(program):  # what the command runs outside its folder
        if inside(root, folder) or not root.exists():
            continue
        base = os.path.relpath(real(root), resolved)
        pairs = hashed_tree(root, left) if root.is_dir() else [("", hash_file(root, left))]
        for name, data in pairs:
            name = os.path.normpath(os.path.join(base, name))
            if name not in seen:
                seen.add(name)
                found.append((name, data, False))
                left -= data.size if isinstance(data, Digest) else 0
    return sorted(found, key=lambda entry: entry[0])


def program_identity(program: Program, hello: dict | None) -> dict:
    """The code identity of this bot (see the entrants table): the declared command, a sha256
    over its files (`program_files`), and what it answered to hello."""
    files = program_files(program)
    hello = hello or {}
    return {"kind": "kdtp", "command": list(program.declared or program.command),
            "files_sha256": files_sha256((name, data) for name, data, _ in files),
            "files": len(files), "bot_name": hello.get("name"), "bot_version": hello.get("version")}


def _mode(program: Program, name, otherwise: int) -> int:
    """The permissions of the bot's file or folder `name` (another user as root, the bot reads
    in its copy what it may read in its folder, no more); `otherwise` when it is gone."""
    try:
        return os.lstat(os.path.join(program.cwd, name)).st_mode & 0o777
    except OSError:
        return otherwise


class FilesChanged(UserError):
    """A bot's files are not those its run recorded: one line."""


def snapshot(program: Program) -> str:
    """A folder holding the bot's files inside its folder as `program_files` hashes them now (its
    links as links, their permissions as they are), made once per content under the private
    folder's `snapshots/` and named by the digest of all its files; what its sandbox shows in
    place of its folder. Copied as they stream (bounded memory, holes kept as holes: a sparse
    file costs what it holds); each use marks it used (`prune_snapshots`). A program pinned to a
    digest (`Program.files_sha256`) gets the copy of that digest, made when its files were hashed
    on this machine, or else FilesChanged when they now differ (or change while copied).
    Unreadable for a link leading out of the folder (the sandbox would not show where it
    leads)."""
    base = private.folder("snapshots")
    pinned = program.files_sha256
    if pinned and os.path.isdir(os.path.join(base, pinned[:32])):
        return _used(os.path.join(base, pinned[:32]))
    files = program_files(program)
    digest = files_sha256((name, data) for name, data, _ in files)
    if pinned and digest != pinned:
        raise FilesChanged(f"{program.origin}: its files changed since the run recorded them "
                           f"(files digest {digest[:12]} now, {pinned[:12]} recorded)")
    folder = os.path.join(base, digest[:32])
    if os.path.isdir(folder):
        return _used(folder)
    partial = tempfile.mkdtemp(prefix=f".{digest[:32]}-", dir=base)
    try:
        for name, data, own in files:
            if own:
                _copy(program, partial, name, data)
        os.chmod(partial, _mode(program, ".", 0o755))
        try:
            os.rename(partial, folder)  # atomic: another worker may have won the race
        except OSError:
            if not os.path.isdir(folder):
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return _used(folder)


def _copy(program: Program, partial: str, name: str, data) -> None:
    """Copy the bot's file or link `name` (hashed as `data`) into `partial`."""
    path = os.path.join(partial, name)
    for above in reversed(Path(name).parents[:-1]):
        if not os.path.isdir(os.path.join(partial, above)):
            os.mkdir(os.path.join(partial, above))
            os.chmod(os.path.join(partial, above), _mode(program, above, 0o755))
    if isinstance(data, Link):
        if data.leads_to(name) is None:
            raise Unreadable(f"{os.path.join(program.cwd, name)} is a link leading out of the "
                             f"bot's folder (to {data.target}): its sandbox shows it its own "
                             "files only")
        os.symlink(data.target, path)
        return
    source = open_beneath(program.cwd, name)
    out = private.open_file(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        os.fchmod(out, _mode(program, name, 0o600))
        copied = copy_fd(source, out, os.path.join(program.cwd, name), data.size)
    finally:
        os.close(source)
        os.close(out)
    if copied != data:
        raise FilesChanged(f"{program.origin}: its file {name} changed while kdtourney copied "
                           "it (try again once the bot's files are settled)")


def _used(folder: str) -> str:
    """Mark the snapshot `folder` used now (its mtime), for `prune_snapshots`."""
    with contextlib.suppress(OSError):
        os.utime(folder)
    return folder


def prune_snapshots(keep=(), days: float = SNAPSHOT_DAYS) -> list[str]:
    """Remove the snapshots not used for `days` (`snapshot` marks a use) whose files digest is
    not in `keep` (those a stored tournament still plays); the names removed. A snapshot removed
    is made again from the bot's files while they are unchanged (else FilesChanged)."""
    base = private.folder("snapshots")
    keep = {digest[:32] for digest in keep if digest}
    old = time.time() - days * 86400
    removed = []
    with os.scandir(base) as entries:
        for entry in entries:
            if entry.name in keep or not entry.is_dir(follow_symlinks=False):
                continue
            with contextlib.suppress(OSError):  # another process's use meanwhile: kept
                if entry.stat(follow_symlinks=False).st_mtime < old:
                    shutil.rmtree(entry.path)
                    removed.append(entry.name)
    return removed
