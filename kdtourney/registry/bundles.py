"""The files of folder bots, as read when the registry was built: what travels to the workers.

    Sources         {bots folder: {name: bytes}} and each folder module's own files (`Bundle`):
                    `source_files`, `own_files`, `own_named` (what its identity hashes), `drop`
    declared_files  the paths a module lists in KDTOURNEY_FILES, read without running it
    parse_source    a module's syntax tree, within bounds (SOURCE_LIMIT bytes, Python's depth)
    bundle_files    those paths' files, read as a submission is; ValueError (one line) for a path
                    outside the folder or missing, a link leading out, over BUNDLE_LIMIT bytes
    unlisted_sibling  why a module importing a module beside it that it does not list is broken
    encode_sources, decode_sources  `source_files()` as JSON text and back (for a file)
    sources_digest  a sha256 over `source_files()`
    unpacked        a folder of the private folder holding given files, once per content
"""

import ast
import base64
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kdtourney.external import private
from kdtourney.external.files import (
    Link,
    Unreadable,
    files_sha256,
    inside,
    layout,
    left_out,
    read_tree,
)

FILES_VAR = "KDTOURNEY_FILES"   # a folder bot module's list of the files it needs beside it
BUNDLE_LIMIT = 64 << 20         # bytes a folder bot's files may hold (they travel to every worker)
SOURCE_LIMIT = 4 << 20          # bytes of a module's source that kdtourney parses


class TooDeep(ValueError):
    """A module kdtourney does not parse: over SOURCE_LIMIT, or nesting deeper than Python's
    parser goes (one line)."""


def parse_source(source: str) -> ast.Module | None:
    """The syntax tree of a module's source; None for a syntax error (importing the module
    reports it); TooDeep for a source over SOURCE_LIMIT bytes or nesting deeper than Python's
    parser and its tree go (`X = 1+1+...+1`): RecursionError there is checked, not a crash."""
    if len(source) > SOURCE_LIMIT:
        raise TooDeep(f"its source holds {len(source) / (1 << 20):.1f} MiB, over the "
                      f"{SOURCE_LIMIT >> 20} MiB kdtourney parses of a module (put data in "
                      f"files it lists in {FILES_VAR})")
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    except (RecursionError, MemoryError):
        raise TooDeep("its code nests deeper than kdtourney parses (Python's recursion limit)") \
            from None


def declared_files(source: str) -> list[str]:
    """The paths a folder bot module lists in `KDTOURNEY_FILES = [...]` (a top-level assignment
    of a list of strings, read from the source without running it); [] without one (or for a
    syntax error: importing the module reports it). ValueError for a value that is not such a
    list, TooDeep for a module not parsed (`parse_source`)."""
    parsed = parse_source(source)
    for node in parsed.body if parsed is not None else ():
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == FILES_VAR
                                                for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                value = None
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{FILES_VAR} must be a list of paths written out, e.g. "
                                 f"{FILES_VAR} = [\"wlib\", \"weights.json\"]")
            return list(value)
    return []


def bundle_files(folder: Path, paths, what: str = FILES_VAR) -> dict[str, bytes]:
    """{name relative to `folder`: bytes} of the listed paths (a folder: every file under it,
    see kdtourney.external.files.tree), read as a submission is (kdtourney.external.files
    .read_tree: no link followed; a link to a file of the folder is sent as that file's bytes, a
    link to a folder is left out). ValueError (one line, starting with `what` the paths are) for
    a path outside `folder` or missing, a link leading out of it, a file that is not a regular
    one, or files holding more than BUNDLE_LIMIT bytes in all."""
    named = _named(folder, paths, what)
    shown = layout(folder, named)
    size = sum(os.lstat(folder / name).st_size for name, link in shown.items() if link is None)
    if size > BUNDLE_LIMIT:
        raise ValueError(f"{what}: the files hold {size / (1 << 20):.1f} MiB, over the "
                         f"{BUNDLE_LIMIT >> 20} MiB a bot may take to every worker; "
                         + ("list only what the bot reads" if what == FILES_VAR else
                            "keep only what the bot reads there"))
    try:
        read = dict(read_tree(folder, BUNDLE_LIMIT, named))
    except Unreadable as exc:
        raise ValueError(f"{what}: {exc}") from None
    found = {}
    for name, data in read.items():
        if not any(n == "." or name == n or name.startswith(f"{n}/") for n in named):
            continue  # read only as what a listed link leads to
        here = name
        for _ in range(40):  # a link to a link ... (a loop is left out)
            if not isinstance(data, Link):
                break
            here = data.leads_to(here)
            if here is None:
                raise ValueError(f"{what}: {name!r} is a link to a file outside the bot's "
                                 "folder")
            data = read.get(here)
        if isinstance(data, bytes):
            found[name] = data
    return found


def _named(folder: Path, paths, what: str) -> list[str]:
    """The listed paths, normalised; ValueError for one outside `folder` or missing."""
    named = []
    for rel in paths:
        path = folder / rel
        if not inside(path, folder):
            raise ValueError(f"{what}: {rel!r} is outside the bot's folder")
        if not path.exists():
            raise ValueError(f"{what}: {rel!r} does not exist in {folder}")
        named.append(os.path.normpath(rel))
    return named


def _imported(source: str) -> set[str]:
    """The top-level names a module imports by absolute `import` statements (anywhere in it);
    none for a module not parsed."""
    try:
        parsed = parse_source(source)
    except TooDeep:
        parsed = None
    if parsed is None:
        return set()
    names = set()
    for node in ast.walk(parsed):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def unlisted_sibling(sources, folder: Path, names) -> str | None:
    """Why a module of a bots folder may not be used (one line), if it (or a file it lists)
    imports a module or package beside it that it does not list: that works here, where the
    folder is on sys.path, and fails on every worker, which gets only the files a module lists.
    None if there is no such import (written as an `import` statement)."""
    for top in sorted(set().union(*map(_imported, sources))):
        for entry in (f"{top}.py", top):
            path = folder / entry
            if left_out(entry) or not (path.is_file() if entry.endswith(".py") else path.is_dir()):
                continue
            if entry not in names and not any(n.startswith(f"{entry}/") for n in names):
                return (f"it imports {top}, which lies beside it but is not in its {FILES_VAR}: "
                        f"add {json.dumps(entry)} to {FILES_VAR} (or give the bot a folder of "
                        "its own)")
    return None


@dataclass(frozen=True)
class Bundle:
    """A folder bot module's files: `names` are keys of `source_files()[folder]`; `prefix` is its
    own folder's ("NAME/", for a bot's subfolder; "" for a module of the bots folder itself)."""

    folder: str
    prefix: str
    names: tuple

    def own_names(self) -> list[str]:
        """The names relative to the bot's folder: what its identity hashes."""
        return [name[len(self.prefix):] for name in self.names]


class Sources:
    """The files of the bot folders used, as read: `folders` ({bots folder: {name relative to it:
    bytes}}), and `bundles` ({folder bot module: its `Bundle`})."""

    def __init__(self):
        self.folders: dict[str, dict[str, bytes]] = {}
        self.bundles: dict[str, Bundle] = {}

    def source_files(self) -> dict[str, dict[str, bytes]]:
        """A copy of `folders`: what `BotRegistry.from_sources` rebuilds the bots from."""
        return {folder: dict(names) for folder, names in self.folders.items()}

    def own_files(self, origin: str) -> dict:
        """The files of the folder bot module `origin`, in the form of `source_files()`: the
        module, its folder's helpers and the files it lists ({} for other bots)."""
        if origin not in self.bundles:
            return {}
        bundle = self.bundles[origin]
        files = self.folders[bundle.folder]
        return {bundle.folder: {name: files[name] for name in bundle.names if name in files}}

    def own_named(self, origin: str) -> list[tuple[str, bytes]]:
        """(name relative to its own folder, bytes) of the files of the folder bot module
        `origin`: what its identity hashes."""
        bundle = self.bundles[origin]
        files = self.folders[bundle.folder]
        return [(name, files[key]) for name, key in zip(bundle.own_names(), bundle.names)
                if key in files]

    def drop(self, origin: str, files=()) -> None:
        """Ship none of the files of the bot file `origin`: the file (and `files` beside it), or
        a bot's subfolder."""
        self.bundles.pop(origin, None)
        for folder, names in self.folders.items():
            rel = os.path.relpath(origin, folder)
            if rel.startswith(".."):
                continue
            sub = rel.split(os.sep)[0] + "/" if os.sep in rel else None
            for name in [n for n in names if n in (rel, *files) or (sub and n.startswith(sub))]:
                del names[name]


def encode_sources(files: dict) -> str:
    """`BotRegistry.source_files()` as JSON text (file contents in base64), for a file."""
    return json.dumps({folder: {name: base64.b64encode(data).decode("ascii")
                                for name, data in sorted(names.items())}
                       for folder, names in sorted(files.items())})


def decode_sources(text: str) -> dict:
    """The inverse of `encode_sources`."""
    return {folder: {name: base64.b64decode(data) for name, data in names.items()}
            for folder, names in json.loads(text).items()}


def sources_digest(files: dict) -> str:
    """A sha256 over `BotRegistry.source_files()`: the same bots shipped give the same digest."""
    return files_sha256((f"{folder}\0{name}", data) for folder, names in files.items()
                        for name, data in names.items())


def unpacked(names: dict) -> Path:
    """A folder holding the files `names` ({relative name: bytes}), named by their content in the
    harness's private folder (bots/DIGEST): written once per machine, then shared by every worker
    and run that ships the same files."""
    digest = files_sha256(names.items())[:24]
    base = Path(private.folder("bots"))
    folder = base / digest
    if folder.is_dir():
        return folder
    partial = Path(tempfile.mkdtemp(prefix=f".{digest}-", dir=base))
    for name, data in names.items():
        path = partial / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    try:
        os.rename(partial, folder)  # atomic: another worker may have won the race
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
    return folder


__all__ = ["Sources", "Bundle", "declared_files", "parse_source", "TooDeep", "SOURCE_LIMIT",
           "bundle_files", "unlisted_sibling",
           "encode_sources", "decode_sources", "sources_digest", "unpacked", "FILES_VAR",
           "BUNDLE_LIMIT"]
