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
  KDTP (kdtourney.bots.external.load_toml: name, command, description, files, [options]). With
  `run_modules=False` (--sandbox) a bot module is read, not run (kdtourney.bots.source_scan): its
  bots play in their own process only. A bot module lists the other files it needs (its package,
  its data) in `KDTOURNEY_FILES = [...]`, read from its source (`declared_files`, at most
  BUNDLE_LIMIT bytes): they travel with it to every worker (`source_files`, `from_sources`);
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
  read when the registry was built (what the workers run);
- an entry point: every file of the top-level package (or the single module) that defines the bot;
- a built-in bot: the kdtourney source files its module imports, directly or not (with their
  packages' `__init__.py`; the registry, which finds bots and never plays, left out), and the data
  files they list in `KDTOURNEY_FILES` (the tile table, the value networks' weights): the engine
  decides what a bot sees and may do, the kernels how it searches; the arena and report do not
  change how a bot plays. So a new network changes the identity of the bots that load it only.
For a TOML bot (kind "kdtp"): the command as declared, a sha256 over every file it can read when
it runs (its folder, what its command resolves to, the TOML's `files`), and the name and version
it answers to hello (kdtourney.bots.external.identity).
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
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from kdtourney.bots.base import Bot
from kdtourney.bots.source_scan import bots_in_source
from kdtourney.bots.external import (ExternalBot, ProcessPool, ProcessSettings, Program,
                                     check_programs, load_toml, program_identity, serve_program)

BUILTIN_MODULES = ("kdtourney.bots.random_bot", "kdtourney.bots.greedy", "kdtourney.bots.mce",
                   "kdtourney.bots.mcts", "kdtourney.bots.expectimax", "kdtourney.bots.value_greedy")
ENTRY_POINT_GROUP = "kdtourney.bots"
NOT_BOT_MODULES = ("setup.py", "build.py", "conftest.py")  # build and test scripts
ENV_VAR = "KDTOURNEY_BOTS_DIR"
CWD_FOLDER = "bots"
BUILT_IN = "built-in"
FILES_VAR = "KDTOURNEY_FILES"   # a folder bot module's list of the files it needs beside it
BUNDLE_LIMIT = 64 << 20         # bytes a folder bot's files may hold (they travel to every worker)

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*\Z")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT = re.compile(r"[+-]?\d+\Z")
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")


class EntrantError(ValueError):
    """A malformed entrant spec, an unknown bot or parameter, or a bad parameter value."""


class DuplicateBotError(ValueError):
    """Two bots with one name."""


class BotsDirError(ValueError):
    """A bots folder that was asked for does not exist."""


# --- identity: what code plays --------------------------------------------------------------

# the fields of an identity the digest covers, per kind: code only, never where it lives
CODE_FIELDS = {"python": ("source_sha256",),
               "kdtp": ("command", "files_sha256", "bot_name", "bot_version")}
_NOT_PLAYING = ("bots/registry.py",)  # built-in sources that find bots but never play


def files_sha256(files) -> str:
    """sha256 over (relative name, bytes) pairs, in name order: names and contents count, not
    where the files are."""
    h = hashlib.sha256()
    for name, data in sorted(files):
        h.update(name.encode("utf-8") + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def code_digest(identity: dict) -> str:
    """The short digest (12 hex characters of a sha256) of an identity's code fields."""
    kind = identity["kind"]
    code = {k: identity.get(k) for k in CODE_FIELDS[kind]}
    text = json.dumps(dict(code, kind=kind), sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _tree_files(root: Path, prefix: str = ""):
    """(name relative to root, bytes) of every file under `root`, caches left out."""
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            yield prefix + path.relative_to(root).as_posix(), path.read_bytes()


def tree(root: Path) -> list[Path]:
    """`root` itself if it is a file, else every file under it, sorted; caches (__pycache__,
    .pyc) and hidden entries (a name starting with '.', such as .git) left out."""
    if root.is_file():
        return [root]
    found = []
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if path.is_file() and path.suffix != ".pyc" and "__pycache__" not in parts \
                and not any(part.startswith(".") for part in parts):
            found.append(path)
    return found


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


def bundle_files(folder: Path, paths) -> dict[str, bytes]:
    """{name relative to `folder`: bytes} of the listed paths (a folder: every file under it,
    see `tree`). ValueError (one line) for a path outside `folder` or missing, or files holding
    more than BUNDLE_LIMIT bytes in all."""
    root = folder.resolve()
    found: dict[str, Path] = {}
    for rel in paths:
        path = folder / rel
        try:
            path.resolve().relative_to(root)
        except ValueError:
            raise ValueError(f"{FILES_VAR}: {rel!r} is outside the bot's folder") from None
        if not path.exists():
            raise ValueError(f"{FILES_VAR}: {rel!r} does not exist in {folder}")
        for file in tree(path):
            name = file.relative_to(folder).as_posix()
            try:  # a link inside may point anywhere the user can read
                file.resolve().relative_to(root)
            except ValueError:
                raise ValueError(f"{FILES_VAR}: {name!r} is a link to a file outside the bot's "
                                 "folder") from None
            found[name] = file
    size = sum(file.stat().st_size for file in found.values())
    if size > BUNDLE_LIMIT:
        raise ValueError(f"{FILES_VAR}: the files hold {size / (1 << 20):.1f} MiB, over the "
                         f"{BUNDLE_LIMIT >> 20} MiB a bot may take to every worker; list only "
                         "what the bot reads")
    return {name: file.read_bytes() for name, file in found.items()}


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
    """A folder holding the files `names` ({relative name: bytes}), named by their content under
    the temporary folder (kdtourney-bots-UID/DIGEST): written once per machine, then shared by
    every worker and run that ships the same files."""
    digest = files_sha256(names.items())[:24]
    base = Path(tempfile.gettempdir(), f"kdtourney-bots-{os.getuid() if hasattr(os, 'getuid') else 0}")
    folder = base / digest
    if folder.is_dir():
        return folder
    base.mkdir(parents=True, exist_ok=True)
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


def _kdtourney_imports(source: bytes) -> set[str]:
    """The kdtourney modules a source imports anywhere in it (`from pkg import name` counts
    pkg.name, which is a module or is not found)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in names if name.split(".")[0] == "kdtourney"}


def builtin_files(module: str) -> dict[str, bytes]:
    """{path under the kdtourney package: bytes} of what decides the play of the built-in bots of
    `module` (see the module docstring)."""
    root = Path(__file__).resolve().parents[1]
    files, todo = {}, [module]
    while todo:
        parts = todo.pop().split(".")[1:]
        paths = [root.joinpath(*parts[:i], "__init__.py") for i in range(len(parts) + 1)]
        paths.append(root.joinpath(*parts).with_suffix(".py") if parts else root / "__init__.py")
        for path in paths:
            name = path.relative_to(root).as_posix()
            if name in files or name in _NOT_PLAYING or not path.is_file():
                continue
            files[name] = source = path.read_bytes()
            for extra, data in bundle_files(path.parent, declared_files(source.decode("utf-8"))).items():
                files[path.parent.joinpath(extra).relative_to(root).as_posix()] = data
            todo.extend(_kdtourney_imports(source))
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
    """A bot module that could not be imported, with the error's last line."""

    origin: str
    error: str


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
    with one name raise DuplicateBotError.
    """

    def __init__(self, bots_dirs=(), *, env: bool = True, cwd: bool = True,
                 entry_points: bool = True, run_modules: bool = True):
        self._reset()
        self._run_modules = run_modules
        folders = self._folders(bots_dirs, env, cwd)
        self._load_builtins()
        for folder in folders:
            self._load_folder(folder, str(folder))
        if entry_points:
            self._load_entry_points()

    def _reset(self):
        self._bots: dict[str, BotInfo] = {}
        self._broken: list[BrokenModule] = []
        self._broken_by_stem: dict[str, BrokenModule] = {}
        self._files: dict[str, dict[str, bytes]] = {}  # bots folder -> {relative name: bytes}
        self._bundles: dict[str, list[str]] = {}       # folder bot module -> its files' names
        self._hellos: dict[Program, dict] = {}
        self._identities: dict[str, dict] = {}
        self._checked: set[str] = set()  # specs of Python bots made once (resolve)

    @classmethod
    def from_sources(cls, files: dict, *, entry_points: bool = True,
                     run_modules: bool = True) -> "BotRegistry":
        """A registry of the built-ins, the bot folders shipped as `files` (from `source_files()`)
        and, with entry_points, the installed entry points: how a worker gets the bots of the
        process that scheduled the games; run_modules False: bot modules are read, not run
        (sandboxed, they run in their sandbox only).

        Each folder's files are unpacked once per machine into a folder named by their content
        (`unpacked`), and imported from there under the names and origins they had in the
        original process: a bot finds its files beside its module's `__file__`.
        """
        registry = cls.__new__(cls)
        registry._reset()
        registry._run_modules = run_modules
        registry._load_builtins()
        for folder, names in files.items():
            registry._load_folder(unpacked(names), folder)
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

    def source_files(self) -> dict[str, dict[str, bytes]]:
        """{bots folder: {name relative to it: bytes}}: every top-level `.py` and `.toml` file of
        the bot folders used and the files their bots list in KDTOURNEY_FILES, as read when the
        registry was built; `BotRegistry.from_sources` rebuilds the bots from it (a TOML bot's
        command still runs from the folder of its origin)."""
        return {folder: dict(names) for folder, names in self._files.items()}

    def resolve(self, spec) -> Entrant:
        """The Entrant of `spec` checked against its bot: known bot, known parameters, values of
        the types of their defaults (an int where a float is expected becomes a float; a value where
        a str is expected becomes its text), and for a bot whose class runs in this process (built-in,
        folder module, installed) values it accepts (it is made once: `mcts:c=-1` fails here, not
        in every game). Raises EntrantError with a one-line message."""
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
        resolved = Entrant(info.name, tuple(converted))
        if info.program is None and info.cls is not None and resolved.spec not in self._checked:
            self._check_constructor(info, resolved)
            self._checked.add(resolved.spec)
        return resolved

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
            files = self._files[os.path.dirname(info.origin)]
            names = [name for name in self._bundles[info.origin] if name in files]
            return {"kind": "python", "origin": info.origin, "files": names,
                    "source_sha256": files_sha256((name, files[name]) for name in names)}
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
                raise EntrantError(f"{entrant.spec}: its module was read, not run (--sandbox): "
                                   "it plays in its own process only")
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
        files = self._own_files(info) if sandboxed else self._files
        name = f"sources-{sources_digest(files)[:12]}.json"
        return serve_program(entrant.spec, pool.file(name, encode_sources(files)),
                             trusted=sandboxed and not files)

    def _own_files(self, info: BotInfo) -> dict:
        """A folder bot's files as read, in the form of `source_files()`: its module, its
        folder's helpers and the files it lists ({} for other bots)."""
        if info.origin not in self._bundles:
            return {}
        folder = os.path.dirname(info.origin)
        files = self._files[folder]
        return {folder: {name: files[name] for name in self._bundles[info.origin] if name in files}}

    def start_check(self, specs, settings: ProcessSettings | None = None) -> dict:
        """Start once every TOML bot among the entrants `specs` and exchange hello: {spec: the
        bot's hello}. StartupError (one line naming the TOML file) for one that does not start
        or answer within the start-up timeout. (Python bots played isolated run kdtourney's own
        `serve`: a failure there shows in the games' faults.)"""
        programs = {spec: self.program(spec) for spec in specs}
        hellos = check_programs([p for p in programs.values() if p is not None],
                                settings or ProcessSettings())
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

    def program_identity(self, spec) -> dict | None:
        """The code identity of a TOML bot (kind "kdtp": declared command, sha256 of its files,
        the name and version it answers to hello; origin: the TOML file, for display, not in the
        digest); None for a Python bot. Starts the bot once if `start_check` has not."""
        info = self._bots[self.resolve(spec).name]
        if info.program is None:
            return None
        if info.program not in self._hellos:
            self.start_check([info.name])
        return dict(program_identity(info.program, self._hellos[info.program]), origin=info.origin)

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
        """The bots of `folder` (this machine's copy of the bots folder `origin_folder`)."""
        files = self._files.setdefault(origin_folder, {})
        scripts = set()  # the .py files the TOML files' commands name
        for path in sorted(folder.glob("*.toml")):
            origin = os.path.join(origin_folder, path.name)
            try:
                files[path.name] = path.read_bytes()
                declared = load_toml(path, origin)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                self._add_broken(origin, str(exc) if isinstance(exc, ValueError) else
                                 _error_line(exc), path.stem)
                continue
            program = declared.program
            scripts |= _files_named(program.command, folder, origin_folder)
            self._register(BotInfo(program.name, ExternalBot, origin, declared.description,
                                   declared.options, program), origin)
        modules = sorted(folder.glob("*.py"))
        helpers = [p.name for p in modules if p.name.startswith(("_", "."))]
        for path in modules:
            origin = os.path.join(origin_folder, path.name)
            try:
                data = path.read_bytes()
                source = data.decode("utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                self._add_broken(origin, _error_line(exc), path.stem)
                continue
            files[path.name] = data
            if path.name in helpers or path.name in scripts or path.name in NOT_BOT_MODULES:
                continue  # a helper, a TOML bot's program, a build script: never a bot module
            try:
                extra = bundle_files(folder, declared_files(source))
            except (OSError, ValueError) as exc:
                self._add_broken(origin, str(exc) if isinstance(exc, ValueError) else
                                 _error_line(exc), path.stem)
                continue
            files.update(extra)
            self._bundles[origin] = [path.name, *helpers, *sorted(set(extra) - {path.name})]
            if not self._run_modules:
                self._read_without_running(source, origin, path.stem)
                continue
            try:
                module = _exec_file(path, origin, source)
            except (Exception, SystemExit) as exc:  # a bot module's failure is reported, not fatal
                self._add_broken(origin, _error_line(exc, origin), path.stem)
                continue
            for cls in _bot_classes(module):
                self._add(cls, origin)

    def _read_without_running(self, source: str, origin: str, stem: str):
        """Register the bots of a folder module read from its source (kdtourney.bots.source_scan):
        they play in their own process only, where the module runs."""
        try:
            found = bots_in_source(source, origin)
        except (SyntaxError, ValueError) as exc:
            self._add_broken(origin, _error_line(exc), stem)
            return
        if not found:
            self._add_broken(origin, "no bot class found by reading the source (with --sandbox "
                                     "a module is read, not run: see the README)", stem)
        for name, description, parameters in found:
            self._register(BotInfo(name, None, origin, description, parameters), origin)

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

    def _add_broken(self, origin: str, error: str, stem: str):
        broken = BrokenModule(origin, error)
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
            raise DuplicateBotError(f"two bots are named {name!r}: {_where(old)} and {_where(info)}")
        self._bots[name] = info

    def _unknown_bot(self, name: str) -> str:
        text = f"unknown bot {name!r}; available: {', '.join(sorted(self._bots)) or 'none'}"
        broken = self._broken_by_stem.get(name)
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
        lines.append(f"  {name:<{width}}{info.description or '(no description)'}")
        lines.append(f"  {pad}from: {short(info.origin)}")
        if info.program is not None:
            found = "found" if info.program.executable else "NOT FOUND"
            lines.append(f"  {pad}command: {shlex.join(info.program.declared)} ({found})")
        if info.parameters:
            params = " ".join(f"{k}={_show(v)}" for k, v in info.parameters.items())
            lines.append(f"  {pad}parameters: {params}")
    if registry.broken:
        lines += ["", f"{len(registry.broken)} broken module(s):"]
        lines += [f"  {short(b.origin)}: {b.error}" for b in registry.broken]
    return "\n".join(lines)


def _where(info: BotInfo) -> str:
    if info.program is not None:
        return info.origin
    if info.origin == BUILT_IN:
        return f"{info.cls.__module__}.{info.cls.__qualname__} (built-in)"
    return f"{info.cls.__qualname__} in {info.origin}"


def _show(value) -> str:
    return format_value(value) if isinstance(value, (bool, int, float, str)) else repr(value)


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
