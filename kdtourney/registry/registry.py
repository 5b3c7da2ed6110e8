"""Finding bots by name, and entrants: a bot with its parameters.

Where bots come from, in this order:
- the built-in modules (`BUILTIN_MODULES`);
- bot folders: every `bots_dirs` entry (the command line's `--bots-dir DIR`), then the folders of
  the environment variable KDTOURNEY_BOTS_DIR (an os.pathsep-separated list), then `./bots/` under
  the working directory when it exists. Every `*.py` file of such a folder is a bot module, except
  those whose name starts with `_` or `.`, which are helpers a bot module may import (the folder is on
  sys.path while its modules are imported, and only then), a file a TOML file's command names (a
  KDTP script, run only as that command) and `setup.py`, `build.py`, `conftest.py` (build and
  test scripts). Every `*.toml` file declares a bot in its own process, any language, speaking
  KDTP (kdtourney.external.load_toml: name, command, description, files, [options]). With
  a `sandbox` (--sandbox) a bot module runs nowhere but in a sandbox: the registry asks each
  module what it defines inside one (kdtourney.external.listing, one sandbox per module, all
  at once), and its bots play in their own process only. A bot module lists the other files it
  needs (its package, its data) in `KDTOURNEY_FILES = [...]`, read from its source
  (`declared_files`, at most BUNDLE_LIMIT bytes): they travel with it to every worker
  (`source_files`, `from_sources`); an `import` of a module or package beside it that it does not
  list makes it broken (it would fail on every worker). A bots folder may also hold one subfolder
  per bot (`bot_subfolders`): its TOML files and modules are found the same way, and all its files
  (kdtourney.external.files.tree) are each of its bots' own, with nothing to list. With a sandbox, a
  bot naming what its sandbox would not show is refused (`_refuse_outside`): listed as broken, and
  naming it is one line saying why;
- installed packages, through the entry-point group `kdtourney.bots`: an entry point names a module
  (its bots are found like a folder module's) or one Bot subclass, e.g. in pyproject.toml
  `[project.entry-points."kdtourney.bots"] mybots = "mypackage.bots"`.

Every `Bot` subclass with a non-empty `name` defined in such a module joins by that name. A module
that fails to import is listed in `BotRegistry.broken` and does not stop the others; two bots with
one name raise DuplicateBotError naming both places.

An entrant is a bot with parameters, written `NAME[:key=value]...`, e.g. `mcts:iterations=2000:c=0.7`.
Values become int, float, bool (true/false) or str. `BotRegistry.resolve` checks an entrant against
the bot's parameters and converts the values to the types of their defaults; `BotRegistry.create`
makes the bot, `BotRegistry.factory` a maker of fresh instances, in this process or (a TOML bot,
or any bot with isolate=True) in a process of its own.

What code plays for an entrant: `BotRegistry.identity(spec)`, a JSON-able dict with a short `digest`
over the code only (never paths), so the same code in two folders or two clones has one digest. For
a Python bot, `source_sha256` hashes:
- a folder bot: its module file, the folder's helper modules (`_*.py`, which any bot module of
  the folder may import) and the files it lists in `KDTOURNEY_FILES` (its package, its data), as
  read when the registry was built (what the workers run); in a bot's subfolder, every file of
  it, named relative to it;
- an entry point: every file of the top-level package (or the single module) that defines the bot;
- a built-in bot: the kdtourney files its module imports, at any depth, with their data (as the
  kernels' cache stamps count them, `kdtourney.engine.jit_cache.compiled_sources`: the tile table),
  and the data files they list in `KDTOURNEY_FILES` (the value networks' weights); left out, what
  never decides a move: the registry, which finds bots, and how the kernels are compiled and cached
  (`engine/jit.py`, `engine/jit_cache.py`, `engine/numba_version.py`: the Numba versions tested),
  which changes no result. The engine decides what a bot sees and may do, the kernels how it
  searches; the arena and report do not change how a bot plays. So a new kernel or network changes
  the identity of the bots that use it only (the kernels only the benchmarks and the training run
  live in modules no bot imports: `bench_kernels`, `train_kernels`).
For a TOML bot (kind "kdtp"): the command as declared, a sha256 over every file it can read when
it runs (its own files: its subfolder, or in a bots folder shared with other bots its TOML file and
what it names there; what its command resolves to; the TOML's `files`), and the name and version
it answers to hello (kdtourney.external.identity). No bot's identity covers another bot's
files.
"""

import ast
import base64
import functools
import hashlib
import importlib
import inspect
import json
import linecache
import math
import os
import re
import shlex
import shutil
import sys
import tempfile
import traceback
import types
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path

from kdtourney.engine.jit_cache import compiled_sources
from kdtourney.errors import UserError
from kdtourney.text import shown
from kdtourney.bots.base import Bot
from kdtourney.external.files import Link, Unreadable, files_sha256, is_run_folder, layout, left_out, read_beneath, read_file, read_tree, tree
from kdtourney.external.declaration import TOML_LIMIT
from kdtourney.external import DEFAULT_STARTUP_TIMEOUT, ExternalBot, ProcessPool, ProcessSettings, Program, Sandbox, check_programs, load_toml, program_identity, serve_program
from kdtourney.external import private
from kdtourney.external.identity import inside, own_paths
from kdtourney.external.listing import list_modules
from kdtourney.external.sandbox import refusal

BUILTIN_MODULES = ("kdtourney.bots.random_bot", "kdtourney.bots.greedy", "kdtourney.bots.mce",
                   "kdtourney.bots.mcts", "kdtourney.bots.expectimax", "kdtourney.bots.value_greedy",
                   "kdtourney.bots.heuristic")
ENTRY_POINT_GROUP = "kdtourney.bots"
NOT_BOT_MODULES = ("setup.py", "build.py", "conftest.py")  # build and test scripts
ENV_VAR = "KDTOURNEY_BOTS_DIR"
CWD_FOLDER = "bots"
BUILT_IN = "built-in"
FILES_VAR = "KDTOURNEY_FILES"   # a folder bot module's list of the files it needs beside it
BUNDLE_LIMIT = 64 << 20         # bytes a folder bot's files may hold (they travel to every worker)
TEXT_LIMIT = 500                # characters kept of a text a module's listing gives (an error)

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT = re.compile(r"[+-]?\d+\Z")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")


class EntrantError(UserError):
    """A malformed entrant spec, an unknown bot or parameter, or a bad parameter value."""


class DuplicateBotError(UserError):
    """Two bots with one name."""


class BotsDirError(UserError):
    """A bots folder that was asked for does not exist."""


# --- identity: what code plays --------------------------------------------------------------

# the fields of an identity the digest covers, per kind: code only, never where it lives
CODE_FIELDS = {"python": ("source_sha256",),
               "kdtp": ("command", "files_sha256", "bot_name", "bot_version")}
# built-in sources that never decide a move: finding bots, compiling and caching kernels
_NOT_PLAYING = ("registry/registry.py", "external/files.py", "engine/jit.py", "engine/jit_cache.py",
                "engine/numba_version.py")


def code_digest(identity: dict) -> str:
    """The short digest (12 hex characters of a sha256) of an identity's code fields."""
    kind = identity["kind"]
    code = {k: identity.get(k) for k in CODE_FIELDS[kind]}
    text = json.dumps(dict(code, kind=kind), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _tree_files(root: Path, prefix: str = ""):
    """(name relative to root, bytes) of every file under `root` (kdtourney.external.files.tree)."""
    for path in tree(root):
        yield prefix + path.relative_to(root).as_posix(), path.read_bytes()


def declared_files(source: str) -> list[str]:
    """The paths a folder bot module lists in `KDTOURNEY_FILES = [...]` (a top-level assignment
    of a list of strings, read from the source without running it); [] without one. ValueError
    for a value that is not such a list."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return []  # importing the module reports it
    for node in body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == FILES_VAR
                                                for t in node.targets):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                value = None
            if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{FILES_VAR} must be a list of paths written out, e.g. "
                                 f"{FILES_VAR} = [\"wlib\", \"weights.json\"]")
            return list(value)
    return []


def bundle_files(folder: Path, paths, what: str = FILES_VAR) -> dict[str, bytes]:
    """{name relative to `folder`: bytes} of the listed paths (a folder: every file under it,
    see kdtourney.external.files.tree), read as a submission is (kdtourney.external.files.read_tree: no
    link followed; a link to a file of the folder is sent as that file's bytes, a link to a
    folder is left out). ValueError (one line, starting with `what` the paths are) for a path
    outside `folder` or missing, a link leading out of it, a file that is not a regular one, or
    files holding more than BUNDLE_LIMIT bytes in all."""
    root = folder.resolve()
    named = []
    for rel in paths:
        path = folder / rel
        try:
            path.resolve().relative_to(root)
        except ValueError:
            raise ValueError(f"{what}: {rel!r} is outside the bot's folder") from None
        if not path.exists():
            raise ValueError(f"{what}: {rel!r} does not exist in {folder}")
        named.append(os.path.normpath(rel))
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


def encode_sources(files: dict) -> str:
    """`BotRegistry.source_files()` as JSON text (file contents in base64), for a file."""
    return json.dumps({folder: {name: base64.b64encode(data).decode("ascii")
                                for name, data in sorted(names.items())}
                       for folder, names in sorted(files.items())})


def decode_sources(text: str) -> dict:
    """The inverse of `encode_sources`."""
    return {folder: {name: base64.b64decode(data) for name, data in names.items()}
            for folder, names in json.loads(text).items()}


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


def sources_digest(files: dict) -> str:
    """A sha256 over `BotRegistry.source_files()`: the same bots shipped give the same digest."""
    return files_sha256((f"{folder}\0{name}", data) for folder, names in files.items()
                        for name, data in names.items())


def builtin_files(module: str) -> dict[str, bytes]:
    """{path under the kdtourney package: bytes} of what decides the play of the built-in bots of
    `module` (see the module docstring): the sources compiled into its kernels
    (`jit_cache.compiled_sources`) and the data they list in KDTOURNEY_FILES."""
    root = Path(__file__).resolve().parents[1]
    files = {}
    for path in compiled_sources(root.joinpath(*module.split(".")[1:]).with_suffix(".py")):
        name = path.relative_to(root).as_posix()
        if name not in _NOT_PLAYING:
            files[name] = source = path.read_bytes()
            if path.suffix == ".py":
                for extra, data in bundle_files(path.parent, declared_files(source.decode("utf-8"))).items():
                    files[path.parent.joinpath(extra).relative_to(root).as_posix()] = data
    return files


@functools.lru_cache(maxsize=None)
def builtin_sha256(module: str) -> str:
    """The hash of what decides the play of the built-in bots of `module` (`builtin_files`)."""
    return files_sha256(builtin_files(module).items())


def _package_sha256(cls: type) -> str:
    """The hash of the files of the top-level package (or single module) that defines `cls`."""
    top = sys.modules[cls.__module__.split(".")[0]]
    paths = getattr(top, "__path__", None)
    if paths:
        return files_sha256([f for i, p in enumerate(paths) for f in _tree_files(Path(p), f"{i}/")])
    path = Path(top.__file__)
    return files_sha256([(path.name, path.read_bytes())])


# --- entrants ---------------------------------------------------------------------------------

def _parse_value(text: str):
    if _INT.match(text):
        return int(text)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if _FLOAT.match(text):
        return float(text)
    return text


def format_value(value) -> str:
    """A parameter value as written in a spec: true/false, 3, 0.7, text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


@dataclass(frozen=True, eq=False)
class Entrant:
    """A bot name with parameters: what plays in a tournament.

    params: (key, value) pairs, sorted by key when the Entrant is made (a dict is accepted too).
    Two entrants are equal when their canonical `spec` is, so the same bot with the same parameters
    is one entrant and with different parameters another.
    """

    name: str
    params: tuple = field(default=())

    def __post_init__(self):
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise EntrantError(f"bad bot name {self.name!r}: use letters, digits, _ . and -")
        items = self.params.items() if isinstance(self.params, dict) else self.params
        pairs = {}
        for key, value in items:
            if not isinstance(key, str) or not _KEY.match(key):
                raise EntrantError(f"{self.name}: bad parameter name {key!r}")
            if key in pairs:
                raise EntrantError(f"{self.name}: parameter {key} given twice")
            if not isinstance(value, (bool, int, float, str)):
                raise EntrantError(f"{self.name}: parameter {key} must be an int, float, bool or "
                                   f"str, not {type(value).__name__}")
            if isinstance(value, str) and (not value or ":" in value):
                raise EntrantError(f"{self.name}: parameter {key} has the value {value!r}; a value "
                                   "must be non-empty and cannot contain ':'")
            pairs[key] = value
        object.__setattr__(self, "params", tuple(sorted(pairs.items())))

    @property
    def spec(self) -> str:
        """The canonical spec `name:k=v:...`, keys sorted."""
        return ":".join([self.name] + [f"{k}={format_value(v)}" for k, v in self.params])

    @property
    def kwargs(self) -> dict:
        """The parameters as keyword arguments for the bot's constructor."""
        return dict(self.params)

    def __eq__(self, other):
        return isinstance(other, Entrant) and other.spec == self.spec

    def __hash__(self):
        return hash(self.spec)

    def __str__(self):
        return self.spec


def parse_entrant(spec) -> Entrant:
    """`NAME[:key=value]...` -> Entrant; values become int, float, bool (true/false) or str.

    An Entrant is returned as it is. A malformed spec raises EntrantError.
    """
    if isinstance(spec, Entrant):
        return spec
    if not isinstance(spec, str):
        raise EntrantError(f"an entrant is a string NAME[:key=value]..., not {spec!r}")
    name, *parts = spec.strip().split(":")
    if not name.strip():
        raise EntrantError(f"bad entrant {spec!r}: the bot name is missing (NAME[:key=value]...)")
    params = {}
    for part in parts:
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise EntrantError(f"bad entrant {spec!r}: {part!r} is not key=value")
        if key in params:
            raise EntrantError(f"bad entrant {spec!r}: parameter {key} given twice")
        params[key] = _parse_value(value)
    return Entrant(name.strip(), params)


# --- discovery --------------------------------------------------------------------------------

@dataclass(frozen=True)
class BotInfo:
    """An available bot. origin: "built-in", a file path, or "entry point NAME (dist)";
    program: how to start it, for a bot in its own process (declared by a TOML file), else None."""

    name: str
    cls: type
    origin: str
    description: str
    parameters: dict
    program: Program | None = None


@dataclass(frozen=True)
class BrokenModule:
    """A bot module that could not be imported, with the error's last line; or (refused) a bot
    that --sandbox will not run, with why."""

    origin: str
    error: str
    refused: bool = False


@dataclass(frozen=True)
class _Bundle:
    """A folder bot module's files: `names` are keys of `source_files()[folder]`; `prefix` is its
    own folder's ("NAME/", for a bot's subfolder; "" for a module of the bots folder itself)."""

    folder: str
    prefix: str
    names: tuple

    def own_names(self) -> list[str]:
        """The names relative to the bot's folder: what its identity hashes."""
        return [name[len(self.prefix):] for name in self.names]


def _error_line(exc: BaseException, origin: str | None = None) -> str:
    """'ZeroDivisionError: division by zero (line 3)'; the line is the last one in `origin`."""
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}: {exc.msg} (line {exc.lineno})"
    text = traceback.format_exception_only(type(exc), exc)[-1].strip()
    if origin is not None:
        lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == origin]
        if lines:
            text += f" (line {lines[-1]})"
    return text


def module_name_for(origin: str) -> str:
    """The name a folder module is imported under: unique per file path, the same in every process."""
    stem = re.sub(r"\W", "_", Path(origin).stem)
    digest = hashlib.sha1(origin.encode("utf-8")).hexdigest()[:10]
    return f"kdtourney_userbots_{digest}_{stem}"


def _exec_file(path: Path, origin: str, source: str) -> types.ModuleType:
    """Import the file `path` (text `source`) as a fresh module whose code is `origin`'s (its
    tracebacks name `origin`) and whose `__file__` is `path` (its files lie beside it)."""
    name = module_name_for(origin)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    if str(path) != origin:  # loaded from shipped source: let tracebacks show its lines
        linecache.cache[origin] = (len(source), None, source.splitlines(True), origin)
    folder = str(path.parent)
    sys.modules[name] = module
    sys.path.insert(0, folder)
    try:
        exec(compile(source, origin, "exec"), module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return module


def _bot_classes(module: types.ModuleType, submodules: bool = False) -> list[type]:
    """The Bot subclasses with a name defined in `module` (or, with submodules, in its package)."""
    found = []
    for obj in vars(module).values():
        if not (inspect.isclass(obj) and issubclass(obj, Bot) and obj is not Bot):
            continue
        home = obj.__module__ or ""
        if not (home == module.__name__ or (submodules and home.startswith(module.__name__ + "."))):
            continue
        if getattr(obj, "name", "") and not inspect.isabstract(obj) and obj not in found:
            found.append(obj)
    return found


def bot_subfolders(folder: Path, origin_folder: str | None = None) -> list[Path]:
    """The subfolders of a bots folder that are each a bot's own folder: those holding a TOML
    file or a module at their top, but packages (`__init__.py`), hidden folders, caches, names
    starting with `_`, tournament folders and the folders a bot at the top names (`_claimed`):
    those are a flat bot's package, data or script."""
    claimed = _claimed(folder, origin_folder or str(folder))
    found = []
    for sub in sorted(folder.iterdir()):
        if not sub.is_dir() or left_out(sub.name) or sub.name.startswith("_") \
                or sub.name in claimed or (sub / "__init__.py").exists() or is_run_folder(sub):
            continue
        try:
            if any(p.suffix in (".toml", ".py") and not p.name.startswith(("_", "."))
                   and p.is_file() for p in sub.iterdir()):
                found.append(sub)
        except OSError:  # a folder this user may not read is no bot's it can play
            continue
    return found


def _claimed(folder: Path, origin_folder: str) -> set[str]:
    """The names of the subfolders that the bots at the top of a bots folder name: a TOML file's
    paths (command words holding a '/', a class path's parts, a `-m` package, its `files`), a
    module's KDTOURNEY_FILES (read, never run; the same on every machine: no path is looked
    up)."""
    words = []
    for path in folder.glob("*.toml"):
        try:
            program = load_toml(path).program
        except (OSError, ValueError):
            continue
        declared = list(program.declared)
        words += [*program.reads, *(w for w in declared if os.sep in w)]
        for flag, word in zip(declared, declared[1:]):
            if flag == "-m":
                words.append(word.split(".")[0])
            elif flag in ("-cp", "-classpath", "--class-path"):
                words += word.split(os.pathsep)
    for path in folder.glob("*.py"):
        try:
            words += declared_files(read_file(path, BUNDLE_LIMIT).decode("utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue
    names = set()
    for word in words:
        for root in (str(folder), origin_folder):
            rel = os.path.relpath(os.path.normpath(os.path.join(root, word)), root)
            if rel != "." and not rel.startswith(".."):
                names.add(rel.split(os.sep)[0])
    return names


def _imported(source: str) -> set[str]:
    """The top-level names a module imports by absolute `import` statements (anywhere in it)."""
    try:
        tree_ = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    names = set()
    for node in ast.walk(tree_):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _unlisted_sibling(sources, folder: Path, names) -> str | None:
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


def _names_read(source: str) -> list[str]:
    """The bot names a module's source shows plainly (the last `name = "..."` of each top-level
    class), for a module refused before it runs: naming one of its bots then says why. A guess
    for that message only; what a module defines is learned by running it (or asking it in a
    sandbox)."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError):
        return []
    names = []
    for node in body:
        if isinstance(node, ast.ClassDef):
            found = [s.value.value for s in node.body if isinstance(s, ast.Assign)
                     and any(isinstance(t, ast.Name) and t.id == "name" for t in s.targets)
                     and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)]
            names += found[-1:]
    return names


def _files_named(command, folder: Path, origin_folder: str) -> set[str]:
    """The names of the files of `folder` that a TOML command names (its program or an argument,
    relative, or absolute in the folder the TOML file came from)."""
    names = set()
    for arg in command:
        path = Path(arg)
        if path.is_absolute():
            if str(path.parent) in (str(folder), origin_folder):
                names.add(path.name)
        elif (folder / path).is_file() and (folder / path).parent == folder:
            names.add(path.name)
    return names


def _entry_points():
    return metadata.entry_points(group=ENTRY_POINT_GROUP)


class BotRegistry:
    """Every available bot by name; discovery happens here, when the registry is built.

    bots_dirs: folders of bot modules, searched first; env: also the folders of KDTOURNEY_BOTS_DIR;
    cwd: also `./bots/` when it exists; entry_points: also installed packages' `kdtourney.bots`
    entry points. A folder that was asked for and does not exist raises BotsDirError; two bots
    with one name raise DuplicateBotError, unless `taken` ({bot name: the origin holding it}, a
    ladder's entrants) is given: then the bot holding the name keeps it (a built-in, the origin
    `taken` names, or else the first found) and the other is broken, refused with one line
    (`_register`). sandbox: bot modules of the folders run in such a
    sandbox only (--sandbox): what they define, and the parameter values they refuse
    (`resolve`), is asked there, each module answering within `startup_timeout` seconds.
    """

    def __init__(self, bots_dirs=(), *, env: bool = True, cwd: bool = True,
                 entry_points: bool = True, sandbox: Sandbox | None = None,
                 startup_timeout: float = DEFAULT_STARTUP_TIMEOUT, taken: dict | None = None):
        self._reset()
        self._taken = taken
        self._run_modules = sandbox is None
        self._sandbox, self._startup_timeout = sandbox, startup_timeout
        self._sandbox_allow = None if sandbox is None else tuple(sandbox.allowed)
        folders = self._folders(bots_dirs, env, cwd)
        self._load_builtins()
        for folder in folders:
            self._load_folder(folder, str(folder))
        self._list_modules()
        if entry_points:
            self._load_entry_points()

    def _reset(self):
        self._bots: dict[str, BotInfo] = {}
        self._broken: list[BrokenModule] = []
        self._broken_by_stem: dict[str, BrokenModule] = {}
        self._files: dict[str, dict[str, bytes]] = {}  # bots folder -> {relative name: bytes}
        self._bundles: dict[str, _Bundle] = {}         # folder bot module -> its files
        self._sandbox_allow = None  # with --sandbox: the folders allowed (see _refuse_outside)
        self._hellos: dict[Program, dict] = {}
        self._identities: dict[str, dict] = {}
        self._checked: set[str] = set()  # specs of Python bots made once (resolve)
        self._sandbox, self._startup_timeout = None, DEFAULT_STARTUP_TIMEOUT
        self._pending: list[tuple[str, str]] = []  # folder modules to list: (origin, stem)
        self._given: dict | None = None  # what the modules define, as `listings` gave it
        self._refused: dict[str, str | None] = {}  # spec of a listed bot -> its refusal (None: ok)
        self._taken: dict | None = None  # names held (a ladder's): a newcomer's duplicate is refused

    @classmethod
    def from_sources(cls, files: dict, *, entry_points: bool = True, builtins: bool = True,
                     listed: dict | None = None) -> "BotRegistry":
        """A registry of the built-ins (with builtins), the bot folders shipped as `files` (from
        `source_files()`) and, with entry_points, the installed entry points: how a worker gets
        the bots of the process that scheduled the games. listed: what the bot modules define,
        as that process's `listings()` gave it, for a worker of a sandboxed run, which does not
        run them (they run in their sandbox only; their values were checked there).

        Each folder's files are unpacked once per machine into a folder named by their content
        (`unpacked`), and imported from there under the names and origins they had in the
        original process: a bot finds its files beside its module's `__file__`.
        """
        registry = cls.__new__(cls)
        registry._reset()
        registry._run_modules = listed is None
        registry._given = listed
        if builtins:
            registry._load_builtins()
        for folder, names in files.items():
            registry._load_folder(unpacked(names), folder)
        registry._list_modules()
        if entry_points:
            registry._load_entry_points()
        return registry

    # what a registry offers

    @property
    def bots(self) -> dict[str, BotInfo]:
        """{name: BotInfo} of every available bot: built-ins first, then in discovery order."""
        return dict(self._bots)

    @property
    def broken(self) -> list[BrokenModule]:
        """The bot modules that failed to import."""
        return list(self._broken)

    def listings(self) -> dict[str, dict]:
        """{folder bot module: {"bots": [{"name", "description", "parameters"}]}}: what each
        module defines as this registry learned it (running it, or asking it in a sandbox), for
        `from_sources(listed=...)`."""
        out = {origin: {"bots": []} for origin in self._bundles}
        for info in self._bots.values():
            if info.origin in out and info.program is None:
                out[info.origin]["bots"].append({"name": info.name, "description": info.description,
                                                 "parameters": dict(info.parameters)})
        return out

    def source_files(self) -> dict[str, dict[str, bytes]]:
        """{bots folder: {name relative to it: bytes}}: every `.py` and `.toml` file at the top of
        the bot folders used and of their bots' subfolders, every file of a subfolder holding a
        bot module, and the files the modules at the top list in KDTOURNEY_FILES, as read when
        the registry was built; `BotRegistry.from_sources` rebuilds the bots from it (a TOML bot's
        command still runs from the folder of its origin)."""
        return {folder: dict(names) for folder, names in self._files.items()}

    def resolve(self, spec) -> Entrant:
        """The Entrant of `spec` checked against its bot: known bot, known parameters, values of
        the types of their defaults (an int where a float is expected becomes a float; a value where
        a str is expected becomes its text), and for a Python bot values it accepts (it is made
        once, in this process, or for a module run in a sandbox only, in one: `mcts:c=-1` fails
        here, not in every game). Raises EntrantError with a one-line message."""
        info, resolved = self._converted(spec)
        if info.program is None and resolved.spec not in self._checked:
            if info.cls is not None:
                self._check_constructor(info, resolved)
            elif self._sandbox is not None:  # (a worker's listed bots were checked before)
                self._check_in_sandbox(info, resolved)
            self._checked.add(resolved.spec)
        return resolved

    def _converted(self, spec) -> tuple[BotInfo, Entrant]:
        """(its bot, the Entrant of `spec` with its values converted): `resolve` but making it."""
        entrant = parse_entrant(spec)
        info = self._bots.get(entrant.name)
        if info is None:
            raise EntrantError(self._unknown_bot(entrant.name))
        params = info.parameters
        converted = []
        for key, value in entrant.params:
            if key not in params:
                valid = ", ".join(f"{k}={_show(v)}" for k, v in params.items())
                raise EntrantError(f"{info.name} has no parameter {key!r}; "
                                   + (f"its parameters: {valid}" if valid else "it takes no parameters"))
            converted.append((key, _convert(info.name, key, value, params[key])))
        return info, Entrant(info.name, tuple(converted))

    def check(self, specs) -> None:
        """Ask at once, one sandbox per module, what values the bots of `specs` whose modules run
        in a sandbox only would refuse, so that resolving them one by one (`resolve`) asks no
        more; a spec that does not resolve is left to `resolve` to report. Nothing to do for a
        registry that runs its modules."""
        if self._sandbox is None:
            return
        asked: dict[str, list] = {}
        for spec in specs:
            try:
                info, entrant = self._converted(spec)
            except EntrantError:
                continue
            if info.cls is None and info.program is None and entrant.spec not in self._refused:
                asked.setdefault(info.origin, []).append(entrant.spec)
        if asked:
            for origin, answer in self._ask(asked).items():
                if "error" not in answer:  # else `resolve` asks again, and says what failed
                    self._note_refusals(answer, asked[origin])

    def _check_in_sandbox(self, info: BotInfo, entrant: Entrant):
        """`_check_constructor` for a bot whose module runs in a sandbox only: asked there, unless
        `check` or its listing (its defaults) did already."""
        spec = entrant.spec
        if spec not in self._refused:
            answer = self._ask({info.origin: [spec]})[info.origin]
            if "error" in answer:
                raise EntrantError(f"{spec}: {answer['error']}")
            self._note_refusals(answer, [spec])
        if self._refused[spec]:
            raise EntrantError(self._refused[spec])

    def _note_refusals(self, answer: dict, specs):
        """Keep what a module's listing says of `specs`: the one-line error of a value it
        refuses, None for one it takes."""
        refused = answer.get("refused") if isinstance(answer.get("refused"), dict) else {}
        for spec in specs:
            message = refused.get(spec)
            self._refused[spec] = _clip(message) if isinstance(message, str) else None

    @staticmethod
    def _check_constructor(info: BotInfo, entrant: Entrant):
        """Make the bot once with the entrant's values (and close it), so that a value it refuses
        is one error before play, not a fault in every game. A built-in's refusal is a TypeError
        or ValueError (anything else is a bug, and shows as one); a bot written elsewhere may
        refuse with any exception."""
        refusals = (TypeError, ValueError) if info.origin == BUILT_IN else (Exception, SystemExit)
        try:
            bot = info.cls(**entrant.kwargs)
            bot.close()
        except refusals as exc:
            text = str(exc) if isinstance(exc, (TypeError, ValueError)) and str(exc) else \
                _error_line(exc, info.origin)
            raise EntrantError(f"{entrant.spec}: {text}") from None

    def identity(self, spec) -> dict:
        """What code plays for the entrant `spec`: {"kind", "digest", ...} (see the module
        docstring); EntrantError for an unknown bot. The same for any parameters of one bot."""
        info = self._bots[self.resolve(spec).name]
        if info.name not in self._identities:
            code = self._code_identity(info)
            self._identities[info.name] = dict(code, digest=code_digest(code))
        return dict(self._identities[info.name])

    def _code_identity(self, info: BotInfo) -> dict:
        """The identity of a bot's code without its digest (a TOML bot: `program_identity`)."""
        if info.program is not None:
            return self.program_identity(info.name)
        if info.origin == BUILT_IN:
            source = builtin_sha256(info.cls.__module__)
        elif info.origin in self._bundles:  # a folder module: its files, as read
            bundle = self._bundles[info.origin]
            files = self._files[bundle.folder]
            pairs = [(name, key) for name, key in zip(bundle.own_names(), bundle.names)
                     if key in files]
            return {"kind": "python", "origin": info.origin, "files": [n for n, _ in pairs],
                    "source_sha256": files_sha256((name, files[key]) for name, key in pairs)}
        else:  # an entry point
            source = _package_sha256(info.cls)
        return {"kind": "python", "origin": info.origin, "source_sha256": source}

    def create(self, spec) -> Bot:
        """A new instance of the bot of `spec` (a string or an Entrant) with its parameters (a bot in
        its own process: started at its first `setup`, stopped at `close`)."""
        entrant = self.resolve(spec)
        try:
            return self.factory(entrant)()
        except (TypeError, ValueError) as exc:
            raise EntrantError(f"{entrant.spec}: {exc}") from exc

    def factory(self, spec, pool: ProcessPool | None = None, isolate: bool = False,
                label: str | None = None):
        """A callable making a new instance of the bot of `spec` per call. A TOML bot, or with
        `isolate` any bot (through `kdtourney serve`), plays in a process of `pool` (default: a
        pool of its own per instance, closed with it), as the entrant `label` (default: the
        spec; its processes and log file are its own)."""
        entrant = self.resolve(spec)
        info = self._bots[entrant.name]
        if info.program is None and not isolate:
            if info.cls is None:
                raise EntrantError(f"{entrant.spec}: its module runs in a sandbox only "
                                   "(--sandbox): it plays in its own process only")
            return lambda cls=info.cls, kwargs=entrant.kwargs: cls(**kwargs)
        options = dict(info.parameters, **entrant.kwargs) if info.program is not None else {}
        if pool is not None:
            program = self.program(entrant, pool, isolate)
            return lambda: pool.bot(program, label or entrant.spec, options)

        def own_pool():
            pool = ProcessPool()
            return ExternalBot(pool, self.program(entrant, pool, isolate), entrant.spec, options,
                               owns_pool=True)
        return own_pool

    def program(self, spec, pool: ProcessPool | None = None, isolate: bool = False) -> Program | None:
        """How the entrant `spec` is started in its own process: a TOML bot's command, or with
        `isolate` a Python bot's `kdtourney serve` (its sources in a file of `pool`); None for a bot
        that plays in this process."""
        entrant = self.resolve(spec)
        info = self._bots[entrant.name]
        if info.program is not None or not isolate:
            return info.program
        # sandboxed, a bot gets its own files only: other bots' code is theirs (none: a bot of
        # kdtourney or the installation, which the harness runs too)
        sandboxed = pool.settings.sandbox is not None
        files = self._own_files(info.origin) if sandboxed else self._files
        name = f"sources-{sources_digest(files)[:12]}.json"
        return serve_program(entrant.spec, pool.file(name, encode_sources(files)),
                             trusted=sandboxed and not files)

    def _own_files(self, origin: str) -> dict:
        """The files of the folder bot module `origin` as read, in the form of `source_files()`:
        the module, its folder's helpers and the files it lists ({} for other bots)."""
        if origin not in self._bundles:
            return {}
        bundle = self._bundles[origin]
        files = self._files[bundle.folder]
        return {bundle.folder: {name: files[name] for name in bundle.names if name in files}}

    def start_check(self, specs, settings: ProcessSettings | None = None) -> dict:
        """Start once every TOML bot among the entrants `specs` and exchange hello: {spec: the
        bot's hello}. StartupError (one line naming the TOML file) for one that does not start
        or answer within the start-up timeout. (Python bots played isolated run kdtourney's own
        `serve`: a failure there shows in the games' faults.) Without `settings`, in the
        registry's sandbox, if it has one (never outside it)."""
        programs = {spec: self.program(spec) for spec in specs}
        settings = settings or ProcessSettings(sandbox=self._sandbox,
                                               startup_timeout=self._startup_timeout)
        hellos = check_programs([p for p in programs.values() if p is not None], settings)
        self._hellos.update(hellos)
        return {spec: hellos[p] for spec, p in programs.items() if p is not None}

    def assume_hello(self, spec, identity: dict) -> None:
        """For a TOML bot not started in this process: take the name and version it answered
        to hello from `identity` (a recorded one), so that `identity` needs no start. Nothing
        for a Python bot, or a TOML bot started here already."""
        program = self._bots[self.resolve(spec).name].program
        if program is not None and program not in self._hellos:
            self._hellos[program] = {"name": identity.get("bot_name"),
                                     "version": identity.get("bot_version")}

    def pin(self, spec, identity: dict) -> None:
        """A TOML bot (nothing for a Python bot) plays its files as the run recorded them
        (`identity`, its `files_sha256`): sandboxed, its processes show the copy of its files
        hashed then, however its folder changed since (kdtourney.external.identity
        .snapshot)."""
        name = self.resolve(spec).name
        info = self._bots[name]
        if info.program is None or not identity.get("files_sha256"):
            return
        pinned = replace(info.program, files_sha256=identity["files_sha256"])
        if info.program in self._hellos:
            self._hellos[pinned] = self._hellos[info.program]
        self._bots[name] = replace(info, program=pinned)

    def program_identity(self, spec) -> dict | None:
        """The code identity of a TOML bot (kind "kdtp": declared command, sha256 of its files,
        the name and version it answers to hello; origin: the TOML file, for display, not in the
        digest); None for a Python bot. Starts the bot once if `start_check` has not."""
        info = self._bots[self.resolve(spec).name]
        if info.program is None:
            return None
        if info.program not in self._hellos:
            self.start_check([info.name])
        try:
            found = program_identity(info.program, self._hellos[info.program])
        except (OSError, Unreadable) as exc:
            raise EntrantError(f"{info.origin}: its files cannot be read: "
                               f"{exc if isinstance(exc, Unreadable) else _error_line(exc)}") \
                from None
        return dict(found, origin=info.origin)

    def __contains__(self, name) -> bool:
        return name in self._bots

    def __repr__(self):
        return f"BotRegistry(bots={sorted(self._bots)}, broken={len(self._broken)})"

    # discovery

    @staticmethod
    def _folders(bots_dirs, env, cwd) -> list[Path]:
        if isinstance(bots_dirs, (str, os.PathLike)):
            bots_dirs = [bots_dirs]
        asked = [(Path(d), "") for d in bots_dirs]
        if env:
            asked += [(Path(d), f" (from {ENV_VAR})")
                      for d in os.environ.get(ENV_VAR, "").split(os.pathsep) if d.strip()]
        folders = []
        for folder, where in asked:
            if not folder.is_dir():
                what = "is not a folder" if folder.exists() else "does not exist"
                raise BotsDirError(f"bots folder {str(folder)!r}{where} {what}")
            folders.append(folder.resolve())
        if cwd and Path(CWD_FOLDER).is_dir():
            folders.append(Path(CWD_FOLDER).resolve())
        return list(dict.fromkeys(folders))  # the same folder twice is searched once

    def _load_builtins(self):
        for name in BUILTIN_MODULES:
            try:
                module = importlib.import_module(name)
            except Exception as exc:
                self._add_broken(f"{name} ({BUILT_IN})", _error_line(exc), name.rsplit(".", 1)[-1])
                continue
            for cls in _bot_classes(module):
                self._add(cls, BUILT_IN)

    def _load_folder(self, folder: Path, origin_folder: str):
        """The bots of `folder` (this machine's copy of the bots folder `origin_folder`): the
        files at its top, then each bot's subfolder (`bot_subfolders`)."""
        files = self._files.setdefault(origin_folder, {})
        subfolders = bot_subfolders(folder, origin_folder)
        self._load_files(folder, origin_folder, files, "", subfolders)
        for sub in subfolders:
            self._load_files(sub, origin_folder, files, sub.name + "/")

    def _load_files(self, folder: Path, origin_folder: str, files: dict, prefix: str,
                    subfolders=()):
        """The bots of the TOML files and modules at the top of `folder`: the bots folder itself
        (prefix "": each bot is its file and the files it names or lists) or a bot's subfolder
        (prefix "NAME/": all its files are the bot's). `files`: the bots folder's shipped files,
        named relative to it; subfolders: the bots' subfolders beside a bots folder's files."""
        here = os.path.join(origin_folder, prefix) if prefix else origin_folder
        tomls, modules = sorted(folder.glob("*.toml")), sorted(folder.glob("*.py"))
        scripts, declared = set(), []  # the .py files the TOML files' commands name
        for path in tomls:
            origin = os.path.join(here, path.name)
            try:
                files[prefix + path.name] = self._read(folder, path.name, TOML_LIMIT)
                found = load_toml(path, origin, own_folder=bool(prefix))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                self._add_broken(origin, str(exc) if isinstance(exc, ValueError) else
                                 _error_line(exc), path.stem)
                continue
            scripts |= _files_named(found.program.command, folder, here)
            declared.append((origin, path, found))
        helpers = [p.name for p in modules if p.name.startswith(("_", "."))]
        bots = [p for p in modules if p.name not in helpers and p.name not in scripts
                and p.name not in NOT_BOT_MODULES]
        # at the top of a bots folder, what a bot there may not name under --sandbox (in a
        # bot's subfolder, everything is the bot's)
        others = [] if prefix else [*tomls, *bots, *subfolders]
        for origin, path, found in declared:
            program = found.program
            if not self._refuse_outside(origin, [program.name], path.stem, program.origin, [
                    p for p in own_paths(program) if str(p) != program.origin], others, program) \
                    and self._admit(origin, [program.name],
                                    _files_named(program.command, folder, here)):
                self._register(BotInfo(program.name, ExternalBot, origin, found.description,
                                       found.options, program), origin)
        whole = None  # a bot's subfolder: all its files, shipped with each of its modules
        for path in modules:
            origin = os.path.join(here, path.name)
            try:
                data = self._read(folder, path.name, BUNDLE_LIMIT)
                source = data.decode("utf-8")
            except (OSError, UnicodeDecodeError, Unreadable) as exc:
                self._add_broken(origin, str(exc) if isinstance(exc, Unreadable) else
                                 _error_line(exc), path.stem)
                continue
            files[prefix + path.name] = data
            if path not in bots:
                continue  # a helper, a TOML bot's program, a build script: never a bot module
            try:
                extra = bundle_files(folder, declared_files(source))
                if prefix:
                    whole = whole if whole is not None else bundle_files(folder, ["."],
                                                                         "its folder")
                    extra = dict(whole, **extra)
                else:
                    why = _unlisted_sibling([source, *(extra[n].decode("utf-8", "replace") for n
                                                       in extra if n.endswith(".py"))],
                                            folder, {path.name, *helpers, *extra})
                    if why:
                        raise ValueError(why)
            except (OSError, ValueError) as exc:
                error = str(exc) if isinstance(exc, ValueError) else _error_line(exc)
                for key in [path.stem, *_names_read(source)]:
                    self._add_broken(origin, error, key)
                continue
            files.update({prefix + name: data for name, data in extra.items()})
            names = [path.name, *helpers, *sorted(set(extra) - {path.name, *helpers})]
            self._bundles[origin] = _Bundle(origin_folder, prefix,
                                            tuple(prefix + name for name in names))
            if self._refuse_outside(origin, _names_read(source), path.stem, str(path),
                                    [folder / name for name in extra], others):
                continue
            if not self._run_modules:
                self._pending.append((origin, path.stem))  # listed in a sandbox (_list_modules)
                continue
            try:
                module = _exec_file(path, origin, source)
            except (Exception, SystemExit) as exc:  # a bot module's failure is reported, not fatal
                self._add_broken(origin, _error_line(exc, origin), path.stem)
                continue
            classes = _bot_classes(module)
            if self._admit(origin, [getattr(cls, "name", None) for cls in classes]):
                for cls in classes:
                    self._add(cls, origin)

    def _read(self, folder: Path, name: str, limit: int) -> bytes:
        """A file at the top of a bots folder or a bot's subfolder, read as a submission is
        (kdtourney.external.files): with --sandbox, not through a link (its bytes would go to a
        sandbox: a link could lead to any file the harness may read)."""
        if self._sandbox_allow is None:
            return read_file(folder / name, limit)
        return read_beneath(folder, name, limit)

    def _refuse_outside(self, origin: str, names, stem: str, own: str, named, others,
                        program: Program | None = None) -> bool:
        """With --sandbox (sandbox_allow given), whether to refuse the bot of `origin` (listed
        as broken, by its `names` and `stem`): a TOML `program` naming what its sandbox would
        not show (kdtourney.external.sandbox.refusal), or a bot at the top of a bots folder
        whose `named` paths (what it lists) hold or lie in another bot's file (`others`, but its
        own file `own`): siblings there never see each other."""
        if self._sandbox_allow is None:
            return False
        why = refusal(program, self._sandbox_allow) if program is not None else None
        for path in named if why is None else ():
            for other in others:
                if str(other) != own and (inside(other, path) or inside(path, other)):
                    what = f"another bot's {'folder' if other.is_dir() else 'file'}"
                    why = (f"it names {path}, " + (what if inside(path, other) else
                                                   f"which holds {what} {other.name}")
                           + " (in a bots folder several bots share, each sees only its own "
                             "files: give each bot a folder of its own)")
                    break
            if why:
                break
        if why is None:
            return False
        for key in dict.fromkeys([*names, stem]):
            self._add_broken(origin, f"refused by --sandbox: {why}", key, refused=True)
        return True

    def _list_modules(self):
        """Register the bots of the folder modules not run here: as `from_sources` was given
        them, or as each module tells inside a sandbox (kdtourney.external.listing)."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        if self._given is not None:
            answers = {origin: self._given.get(origin, {"error": "not listed where the games "
                                                                 "were scheduled"})
                       for origin, _ in pending}
        else:
            answers = self._ask({origin: () for origin, _ in pending})
        for origin, stem in pending:
            self._take_listing(origin, stem, answers[origin])

    def _ask(self, specs: dict) -> dict:
        """{module: (its listing, or {"error": one line})} of the modules of `specs` ({module:
        the entrants of its bots to check}), each in a sandbox given only its own files."""
        requests = {origin: (encode_sources(self._own_files(origin)), list(checked))
                    for origin, checked in specs.items()}
        return list_modules(requests, ProcessSettings(startup_timeout=self._startup_timeout,
                                                      sandbox=self._sandbox))

    def _take_listing(self, origin: str, stem: str, answer: dict):
        """Register what the module `origin` defines, from its listing (`_list_modules`): its
        bots, the errors that break it, and the refusals of its bots' defaults."""
        if "error" in answer:
            self._add_broken(origin, _clip(answer["error"]), stem)
            return
        if answer.get("duplicate"):
            if self._taken is None:
                raise DuplicateBotError(_clip(answer["duplicate"]))
            self._add_broken(origin, _clip(answer["duplicate"]), stem)
            return
        try:
            bots = [(b["name"], b.get("description") or "", dict(b.get("parameters") or {}))
                    for b in answer.get("bots") or () if b.get("origin", origin) == origin]
            errors = [b["error"] for b in answer.get("broken") or () if b.get("origin") == origin]
            if not all(isinstance(name, str) and isinstance(description, str)
                       and all(isinstance(k, str) for k in parameters)
                       for name, description, parameters in bots) \
                    or not all(isinstance(e, str) for e in errors):
                raise TypeError
        except (AttributeError, KeyError, TypeError, ValueError):
            self._add_broken(origin, "its listing in a sandbox is not what kdtourney list-bots "
                                     "writes", stem)
            return
        for error in errors:
            self._add_broken(origin, _clip(error), stem)
        if not self._admit(origin, [name for name, _, _ in bots]):
            return
        for name, description, parameters in bots:
            self._register(BotInfo(name, None, origin, _clip(description), parameters), origin)
        if self._given is None:  # its bots with their defaults were checked with the listing
            self._note_refusals(answer, [name for name, _, _ in bots])

    def _load_entry_points(self):
        try:
            points = list(_entry_points())
        except Exception as exc:  # a broken installation should not hide the other bots
            self._add_broken(f"entry points {ENTRY_POINT_GROUP}", _error_line(exc), "")
            return
        for point in points:
            dist = getattr(getattr(point, "dist", None), "name", None)
            origin = f"entry point {point.name}" + (f" ({dist})" if dist else "")
            try:
                obj = point.load()
            except Exception as exc:
                self._add_broken(origin, _error_line(exc), point.name)
                continue
            if inspect.ismodule(obj):
                classes = _bot_classes(obj, submodules=True)
            elif inspect.isclass(obj) and issubclass(obj, Bot) and getattr(obj, "name", ""):
                classes = [obj]
            else:
                self._add_broken(origin, f"{point.value} is neither a module nor a Bot subclass "
                                         "with a name", point.name)
                continue
            if not classes:
                self._add_broken(origin, f"module {point.value} defines no Bot subclass with a name",
                                 point.name)
            for cls in classes:
                self._add(cls, origin)

    def _admit(self, origin: str, names, files=()) -> bool:
        """With `taken` (a ladder's names): whether the bots `names` of the file `origin` may
        join. A name held already is kept by its holder (a built-in, or the origin `taken` names
        for it, even when found later: the holder found first is then put out) and the other
        file is broken, refused with one line, its files (and `files`, the scripts a refused TOML
        file names beside it) no longer shipped (`source_files`), so that no registry made from
        them meets the two. True without `taken`."""
        if self._taken is None:
            return True
        for name in names:
            held = self._bots.get(name)
            if held is None or held.origin == origin:
                continue
            if held.origin == BUILT_IN or self._taken.get(name) != origin:
                holder, newcomer = held.origin, origin
            else:
                holder, newcomer = origin, held.origin
                self._bots = {k: v for k, v in self._bots.items() if v.origin != newcomer}
            self._add_broken(newcomer, f"refused: the bot name {name!r} is taken by {holder} "
                                       "(give this bot another name)", "")
            self._drop_files(newcomer, files if newcomer == origin else ())
            if newcomer == origin:
                return False
        return True

    def _drop_files(self, origin: str, files=()) -> None:
        """Ship none of the files of the bot file `origin`: the file (and `files` beside it), or
        a bot's subfolder."""
        self._bundles.pop(origin, None)
        for folder, names in self._files.items():
            rel = os.path.relpath(origin, folder)
            if rel.startswith(".."):
                continue
            sub = rel.split(os.sep)[0] + "/" if os.sep in rel else None
            for name in [n for n in names if n in (rel, *files) or (sub and n.startswith(sub))]:
                del names[name]

    def _add_broken(self, origin: str, error: str, stem: str, refused: bool = False):
        broken = BrokenModule(origin, error, refused)
        if broken not in self._broken:
            self._broken.append(broken)
        if stem:
            self._broken_by_stem.setdefault(stem, broken)

    def _add(self, cls: type, origin: str):
        name = cls.name
        if not isinstance(name, str) or not _NAME.match(name):
            self._add_broken(origin, f"{cls.__qualname__}.name is {name!r}: a bot name is letters, "
                                     "digits, _ . and -", "")
            return
        try:
            parameters = cls.parameters()
        except (TypeError, ValueError) as exc:
            self._add_broken(origin, f"{cls.__qualname__}: cannot read its parameters: {exc}", name)
            return
        missing = [k for k, v in parameters.items() if v is inspect.Parameter.empty]
        if missing:
            self._add_broken(origin, f"{cls.__qualname__}: every parameter needs a default; "
                                     f"{', '.join(missing)} has none", name)
            return
        self._register(BotInfo(name, cls, origin, cls.description(), parameters), origin)

    def _register(self, info: BotInfo, origin: str):
        name = info.name
        if not _NAME.match(name):
            self._add_broken(origin, f"the bot name {name!r} is not letters, digits, _ . and -", "")
            return
        old = self._bots.get(name)
        if old is not None:
            if old.cls is info.cls and old.cls is not None and old.program is None:
                return  # one class reached twice (e.g. an entry point to a built-in)
            if self._taken is None:
                raise DuplicateBotError(f"two bots are named {name!r}: {_where(old)} and "
                                        f"{_where(info)}")
            holder, newcomer = (info, old) if old.origin != BUILT_IN \
                and self._taken.get(name) == info.origin else (old, info)
            self._add_broken(newcomer.origin, f"refused: the bot name {name!r} is taken by "
                                              f"{_where(holder)} (give this bot another name)", "")
            info = holder
        self._bots[name] = info

    def _unknown_bot(self, name: str) -> str:
        text = f"unknown bot {name!r}; available: {', '.join(sorted(self._bots)) or 'none'}"
        broken = self._broken_by_stem.get(name)
        if broken is not None and broken.refused:
            return f"{broken.origin} is {broken.error}"
        if broken is not None:
            how = "is not a bot file" if broken.origin.endswith(".toml") else "failed to import"
            text += f" ({broken.origin} {how}: {broken.error})"
        elif self.broken:  # a TOML file names its bot inside: it may be one of these
            text += (f"; {len(self.broken)} bot file(s) could not be read, e.g. "
                     f"{self.broken[0].origin}: {self.broken[0].error} (`kdtourney bots` lists them)")
        return text


def listing(registry: BotRegistry) -> str:
    """The text `kdtourney bots` prints: every bot with its description, origin and parameters,
    then the broken modules with their errors. Paths under the working directory are shown
    relative to it."""
    def short(origin):
        if os.path.isabs(origin):
            rel = os.path.relpath(origin)
            return origin if rel.startswith("..") else rel
        return origin

    bots = registry.bots
    width = max((len(name) for name in bots), default=0) + 2
    pad = " " * width
    lines = [f"{len(bots)} bot(s):" if bots else "No bots found."]
    for name, info in bots.items():
        lines.append(f"  {name:<{width}}{shown(info.description) or '(no description)'}")
        lines.append(f"  {pad}from: {short(info.origin)}")
        if info.program is not None:
            found = "found" if info.program.executable else "NOT FOUND"
            lines.append(f"  {pad}command: {shlex.join(info.program.declared)} ({found})")
        if info.parameters:
            params = " ".join(f"{k}={_show(v)}" for k, v in info.parameters.items())
            lines.append(f"  {pad}parameters: {params}")
    if registry.broken:
        lines += ["", f"{len(registry.broken)} broken module(s):"]
        lines += [f"  {short(b.origin)}: {shown(b.error)}" for b in registry.broken]
    return "\n".join(lines)


def _where(info: BotInfo) -> str:
    if info.program is not None:
        return info.origin
    if info.origin == BUILT_IN:
        return f"{info.cls.__module__}.{info.cls.__qualname__} (built-in)"
    if info.cls is None:  # listed in a sandbox
        return f"{info.name} in {info.origin}"
    return f"{info.cls.__qualname__} in {info.origin}"


def _show(value) -> str:
    return format_value(value) if isinstance(value, (bool, int, float, str)) else repr(value)


def _clip(text: str) -> str:
    """A text a module's listing gave, on one line, at most TEXT_LIMIT characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT - 3] + "..."


def _convert(bot: str, key: str, value, default):
    """`value` as the type of `default` for int, float, bool and str defaults; EntrantError if it
    cannot be."""
    def bad(expected):
        return EntrantError(f"{bot}: parameter {key} expects {expected} (default {_show(default)}), "
                            f"not {format_value(value)!r}")

    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("an integer")
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad("a number")
        try:
            if math.isfinite(float(value)):
                return float(value)
        except OverflowError:  # an int past a float's range
            pass
        raise bad("a finite number")
    if isinstance(default, str):
        return format_value(value)
    return value


__all__ = ["BotRegistry", "BotInfo", "BrokenModule", "Entrant", "EntrantError", "DuplicateBotError",
           "BotsDirError", "parse_entrant", "format_value", "listing", "code_digest", "files_sha256",
           "encode_sources", "decode_sources", "sources_digest", "unpacked", "BUILTIN_MODULES",
           "ENTRY_POINT_GROUP", "ENV_VAR", "CODE_FIELDS", "FILES_VAR", "BUNDLE_LIMIT"]
