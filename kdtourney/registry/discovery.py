"""Finding bots: the built-ins, bot folders and installed entry points, into one `Catalog`.

    Catalog          `load` fills `bots` ({name: BotInfo}) and `broken` (BrokenModule: a module
                     that failed, or a bot --sandbox refuses, with why), and `sources` (the
                     folders' files, bundles.Sources); `unknown_bot` says why a name is missing
    BotInfo          a bot: name, class (None: listed in a sandbox), origin, description,
                     parameters, and for a bot in its own process its Program
    DuplicateBotError  two bots with one name (a UserError)
    where            where a bot is defined, for a message
    BUILTIN_MODULES, ENTRY_POINT_GROUP, BUILT_IN, MODULES_PER_SUBMISSION

Where bots come from, which files are bots and what a name clash does: docs/bots.md, "How
kdtourney finds bots".
"""

import difflib
import importlib
import inspect
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from kdtourney.bots.base import Bot
from kdtourney.errors import UserError
from kdtourney.external import ExternalBot, Program, load_toml
from kdtourney.external.declaration import TOML_LIMIT
from kdtourney.external.files import Unreadable, read_beneath, read_file
from kdtourney.external.identity import inside, own_paths
from kdtourney.external.sandbox import refusal
from kdtourney.registry.bundles import (
    BUNDLE_LIMIT,
    Bundle,
    Sources,
    bundle_files,
    declared_files,
    unlisted_sibling,
)
from kdtourney.registry.entrants import BOT_NAME
from kdtourney.registry.folders import NOT_BOT_MODULES, bot_subfolders, files_named, names_read
from kdtourney.registry.modules import bot_classes, error_line, exec_file
from kdtourney.registry.sandboxed import SandboxQuestions, clip, read_listing

BUILTIN_MODULES = ("kdtourney.bots.random_bot", "kdtourney.bots.greedy", "kdtourney.bots.mce",
                   "kdtourney.bots.mcts", "kdtourney.bots.expectimax",
                   "kdtourney.bots.value_greedy", "kdtourney.bots.heuristic")
ENTRY_POINT_GROUP = "kdtourney.bots"
MODULES_PER_SUBMISSION = 8  # bot modules of one bot's subfolder (each listed in a sandbox)
BUILT_IN = "built-in"


class DuplicateBotError(UserError):
    """Two bots with one name."""


@dataclass(frozen=True)
class BotInfo:
    """An available bot. origin: "built-in", a file path, or "entry point NAME (dist)";
    program: how to start it, for a bot in its own process (declared by a TOML file), else None."""

    name: str
    cls: type | None
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


def installed_entry_points():
    """The installed entry points of the group `kdtourney.bots`."""
    return metadata.entry_points(group=ENTRY_POINT_GROUP)


def where(info: BotInfo) -> str:
    """Where a bot is defined, for a message."""
    if info.program is not None:
        return info.origin
    if info.cls is None:  # listed in a sandbox
        return f"{info.name} in {info.origin}"
    if info.origin == BUILT_IN:
        return f"{info.cls.__module__}.{info.cls.__qualname__} (built-in)"
    return f"{info.cls.__qualname__} in {info.origin}"


class Catalog:
    """The bots found, the broken modules and the folders' files.

    taken: {bot name: the origin holding it} (a ladder's entrants): a name clash then refuses
    the newcomer with one line instead of raising DuplicateBotError (`_admit`, `_register`).
    sandbox_allow: with --sandbox, the folders every bot may see (`_refuse_outside`; None
    without). run_modules: import the folder modules here; else they are listed in a sandbox
    (`questions`), or as `given` ({module: its listing}, what a worker was sent)."""

    def __init__(self, *, taken: dict | None = None, sandbox_allow: tuple | None = None,
                 run_modules: bool = True, given: dict | None = None,
                 questions: SandboxQuestions | None = None):
        self.bots: dict[str, BotInfo] = {}
        self.broken: list[BrokenModule] = []
        self.sources = Sources()
        self._broken_by_stem: dict[str, BrokenModule] = {}
        self._taken, self._sandbox_allow = taken, sandbox_allow
        self._run_modules, self._given, self._questions = run_modules, given, questions
        self._pending: list[tuple[str, str]] = []  # folder modules to list: (origin, stem)

    def load(self, folders, *, builtins: bool = True, entry_points: bool = True) -> None:
        """Find the bots: the built-ins, then `folders` ((folder, the bots folder it is a copy
        of)), then the installed entry points."""
        if builtins:
            self._load_builtins()
        for folder, origin_folder in folders:
            self._load_folder(Path(folder), origin_folder)
        self._list_modules()
        if entry_points:
            self._load_entry_points()

    def listings(self) -> dict[str, dict]:
        """{folder bot module: {"bots": [{"name", "description", "parameters"}]}}: what each
        module defines as found (run, or asked in a sandbox)."""
        out: dict[str, dict] = {origin: {"bots": []} for origin in self.sources.bundles}
        for info in self.bots.values():
            if info.origin in out and info.program is None:
                out[info.origin]["bots"].append({"name": info.name, "description": info.description,
                                                 "parameters": dict(info.parameters)})
        return out

    def unknown_bot(self, name: str) -> str:
        """Why no bot is named `name` (one line): the broken module of that name, or the bots
        there are."""
        near = difflib.get_close_matches(name, self.bots, n=1)  # a typo: the nearest name
        text = (f"unknown bot {name!r}" + (f" (did you mean {near[0]!r}?)" if near else "")
                + f"; available: {', '.join(sorted(self.bots)) or 'none'}")
        broken = self._broken_by_stem.get(name)
        if broken is not None and broken.refused:
            return f"{broken.origin} is {broken.error}"
        if broken is not None:
            how = "is not a bot file" if broken.origin.endswith(".toml") else "failed to import"
            text += f" ({broken.origin} {how}: {broken.error})"
        elif self.broken:  # a TOML file names its bot inside: it may be one of these
            text += (f"; {len(self.broken)} bot file(s) could not be read, e.g. "
                     f"{self.broken[0].origin}: {self.broken[0].error} (`kdtourney bots` lists "
                     "them)")
        return text

    # the built-ins and entry points

    def _load_builtins(self):
        for name in BUILTIN_MODULES:
            try:
                module = importlib.import_module(name)
            except Exception as exc:
                self.add_broken(f"{name} ({BUILT_IN})", error_line(exc), name.rsplit(".", 1)[-1])
                continue
            for cls in bot_classes(module):
                self._add(cls, BUILT_IN)

    def _load_entry_points(self):
        try:
            points = list(installed_entry_points())
        except Exception as exc:  # a broken installation should not hide the other bots
            self.add_broken(f"entry points {ENTRY_POINT_GROUP}", error_line(exc), "")
            return
        for point in points:
            dist = getattr(getattr(point, "dist", None), "name", None)
            origin = f"entry point {point.name}" + (f" ({dist})" if dist else "")
            try:
                obj = point.load()
            except Exception as exc:
                self.add_broken(origin, error_line(exc), point.name)
                continue
            if inspect.ismodule(obj):
                classes = bot_classes(obj, submodules=True)
            elif inspect.isclass(obj) and issubclass(obj, Bot) and getattr(obj, "name", ""):
                classes = [obj]
            else:
                self.add_broken(origin, f"{point.value} is neither a module nor a Bot subclass "
                                        "with a name", point.name)
                continue
            if not classes:
                self.add_broken(origin, f"module {point.value} defines no Bot subclass with a "
                                        "name", point.name)
            for cls in classes:
                self._add(cls, origin)

    # bot folders

    def _load_folder(self, folder: Path, origin_folder: str):
        """The bots of `folder` (this machine's copy of the bots folder `origin_folder`): the
        files at its top, then each bot's subfolder (`bot_subfolders`)."""
        files = self.sources.folders.setdefault(origin_folder, {})
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
        declared = self._read_tomls(folder, here, tomls, files, prefix)
        scripts = set().union(*(files_named(found.program.command, folder, here)
                                for _, _, found in declared))  # never bot modules
        helpers = [p.name for p in modules if p.name.startswith(("_", "."))]
        bots = [p for p in modules if p.name not in helpers and p.name not in scripts
                and p.name not in NOT_BOT_MODULES]
        if prefix and len(bots) > MODULES_PER_SUBMISSION:  # one note, not a listing each
            self.add_broken(here.rstrip("/"), f"refused: a bot's folder holds {len(bots)} bot "
                            f"modules, more than the {MODULES_PER_SUBMISSION} kdtourney takes of "
                            "one submission", prefix.rstrip("/"), refused=True)
            modules = bots = []
        # at the top of a bots folder, what a bot there may not name under --sandbox (in a
        # bot's subfolder, everything is the bot's)
        others = [] if prefix else [*tomls, *bots, *subfolders]
        for origin, path, found in declared:
            program = found.program
            named = [p for p in own_paths(program) if str(p) != program.origin]
            if not self._refuse_outside(origin, [program.name], path.stem, program.origin,
                                        named, others, program) \
                    and self._admit(origin, [program.name],
                                    files_named(program.command, folder, here)):
                self._register(BotInfo(program.name, ExternalBot, origin, found.description,
                                       found.options, program), origin)
        at = _ModuleFolder(folder, here, origin_folder, prefix, helpers, others)
        for path in modules:
            self._load_module(at, path, files, path in bots)

    def _read_tomls(self, folder: Path, here: str, tomls, files: dict, prefix: str) -> list:
        """[(origin, path, its declaration)] of the TOML files that declare a bot; the others
        are broken. Each file's bytes go to `files`."""
        declared = []
        for path in tomls:
            origin = os.path.join(here, path.name)
            try:
                files[prefix + path.name] = self._read(folder, path.name, TOML_LIMIT)
                found = load_toml(path, origin, own_folder=bool(prefix))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                self.add_broken(origin, str(exc) if isinstance(exc, ValueError) else
                                error_line(exc), path.stem)
                continue
            declared.append((origin, path, found))
        return declared

    def _load_module(self, at: "_ModuleFolder", path: Path, files: dict, is_bot: bool):
        """A module of a folder: its bytes to `files`; for a bot module, its own files (a
        `Bundle`), then its bots: imported here, or listed in a sandbox (`_list_modules`)."""
        origin = os.path.join(at.here, path.name)
        try:
            data = self._read(at.folder, path.name, BUNDLE_LIMIT)
            source = data.decode("utf-8")
        except (OSError, UnicodeDecodeError, Unreadable) as exc:
            self.add_broken(origin, str(exc) if isinstance(exc, Unreadable) else
                            error_line(exc), path.stem)
            return
        files[at.prefix + path.name] = data
        if not is_bot:
            return  # a helper, a TOML bot's program, a build script: never a bot module
        try:
            extra = at.module_files(path, source)
        except (OSError, ValueError) as exc:
            error = str(exc) if isinstance(exc, ValueError) else error_line(exc)
            for key in [path.stem, *names_read(source)]:
                self.add_broken(origin, error, key)
            return
        files.update({at.prefix + name: data for name, data in extra.items()})
        names = [path.name, *at.helpers, *sorted(set(extra) - {path.name, *at.helpers})]
        self.sources.bundles[origin] = Bundle(at.origin_folder, at.prefix,
                                              tuple(at.prefix + name for name in names))
        if self._refuse_outside(origin, names_read(source), path.stem, str(path),
                                [at.folder / name for name in extra], at.others):
            return
        if not self._run_modules:
            self._pending.append((origin, path.stem))  # listed in a sandbox (_list_modules)
            return
        try:
            module = exec_file(path, origin, source)
        except (Exception, SystemExit) as exc:  # a bot module's failure is reported, not fatal
            self.add_broken(origin, error_line(exc, origin), path.stem)
            return
        classes = bot_classes(module)
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
            self.add_broken(origin, f"refused by --sandbox: {why}", key, refused=True)
        return True

    # modules listed in a sandbox

    def _list_modules(self):
        """Register the bots of the folder modules not run here: as `given`, or as each module
        tells inside a sandbox (kdtourney.external.listing)."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        if self._given is not None:
            answers = {origin: self._given.get(origin, {"error": "not listed where the games "
                                                                 "were scheduled"})
                       for origin, _ in pending}
        else:
            answers = self._questions.ask({origin: () for origin, _ in pending},
                                          self.sources.own_files)
        for origin, stem in pending:
            self._take_listing(origin, stem, answers[origin])

    def _take_listing(self, origin: str, stem: str, answer: dict):
        """Register what the module `origin` defines, from its listing (`_list_modules`): its
        bots, the errors that break it, and the refusals of its bots' defaults."""
        if "error" in answer:
            self.add_broken(origin, clip(answer["error"]), stem)
            return
        if answer.get("duplicate"):
            if self._taken is None:
                raise DuplicateBotError(clip(answer["duplicate"]))
            self.add_broken(origin, clip(answer["duplicate"]), stem)
            return
        read = read_listing(answer, origin)
        if read is None:
            self.add_broken(origin, "its listing in a sandbox is not what kdtourney list-bots "
                                    "writes", stem)
            return
        bots, errors = read
        for error in errors:
            self.add_broken(origin, clip(error), stem)
        if not self._admit(origin, [name for name, _, _ in bots]):
            return
        for name, description, parameters in bots:
            self._register(BotInfo(name, None, origin, clip(description), parameters), origin)
        if self._given is None:  # its bots with their defaults were checked with the listing
            assert self._questions is not None  # not given: listed by the questions
            self._questions.note(answer, [name for name, _, _ in bots])

    # registering

    def add_broken(self, origin: str, error: str, stem: str, refused: bool = False):
        """A broken module (or a refused bot), and the name (`stem`) that says why when asked."""
        broken = BrokenModule(origin, error, refused)
        if broken not in self.broken:
            self.broken.append(broken)
        if stem:
            self._broken_by_stem.setdefault(stem, broken)

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
            held = self.bots.get(name)
            if held is None or held.origin == origin:
                continue
            if held.origin == BUILT_IN or self._taken.get(name) != origin:
                holder, newcomer = held.origin, origin
            else:
                holder, newcomer = origin, held.origin
                self.bots = {k: v for k, v in self.bots.items() if v.origin != newcomer}
            self.add_broken(newcomer, f"refused: the bot name {name!r} is taken by {holder} "
                                      "(give this bot another name)", "")
            self.sources.drop(newcomer, files if newcomer == origin else ())
            if newcomer == origin:
                return False
        return True

    def _add(self, cls: type[Bot], origin: str):
        name = cls.name
        if not isinstance(name, str) or not BOT_NAME.match(name):
            self.add_broken(origin, f"{cls.__qualname__}.name is {name!r}: a bot name is "
                                    "letters, digits, _ . and -", "")
            return
        try:
            parameters = cls.parameters()
        except (TypeError, ValueError) as exc:
            self.add_broken(origin, f"{cls.__qualname__}: cannot read its parameters: {exc}", name)
            return
        missing = [k for k, v in parameters.items() if v is inspect.Parameter.empty]
        if missing:
            self.add_broken(origin, f"{cls.__qualname__}: every parameter needs a default; "
                                    f"{', '.join(missing)} has none", name)
            return
        self._register(BotInfo(name, cls, origin, cls.description(), parameters), origin)

    def _register(self, info: BotInfo, origin: str):
        name = info.name
        if not BOT_NAME.match(name):
            self.add_broken(origin, f"the bot name {name!r} is not letters, digits, _ . and -", "")
            return
        old = self.bots.get(name)
        if old is not None:
            if old.cls is info.cls and old.cls is not None and old.program is None:
                return  # one class reached twice (e.g. an entry point to a built-in)
            if self._taken is None:
                raise DuplicateBotError(f"two bots are named {name!r}: {where(old)} and "
                                        f"{where(info)}")
            holder, newcomer = (info, old) if old.origin != BUILT_IN \
                and self._taken.get(name) == info.origin else (old, info)
            self.add_broken(newcomer.origin, f"refused: the bot name {name!r} is taken by "
                                             f"{where(holder)} (give this bot another name)", "")
            info = holder
        self.bots[name] = info


class _ModuleFolder:
    """The modules at the top of `folder` (this machine's copy of the bots folder
    `origin_folder`, or of its bot's subfolder `prefix`; `here`: its path there), with their
    `helpers` and the `others` a flat bot may not name."""

    def __init__(self, folder: Path, here: str, origin_folder: str, prefix: str, helpers: list,
                 others: list):
        self.folder, self.here, self.origin_folder = folder, here, origin_folder
        self.prefix, self.helpers, self.others = prefix, helpers, others
        self._whole: dict | None = None  # a bot's subfolder: all its files, read once

    def module_files(self, path: Path, source: str) -> dict[str, bytes]:
        """The files the bot module `path` takes with it besides the helpers: what it lists
        in KDTOURNEY_FILES and, in a bot's subfolder, all of it. ValueError (one line) for a
        bad list, or a flat module importing a sibling it does not list."""
        extra = bundle_files(self.folder, declared_files(source))
        if self.prefix:
            if self._whole is None:
                self._whole = bundle_files(self.folder, ["."], "its folder")
            return dict(self._whole, **extra)
        why = unlisted_sibling([source, *(extra[n].decode("utf-8", "replace") for n in extra
                                          if n.endswith(".py"))],
                               self.folder, {path.name, *self.helpers, *extra})
        if why:
            raise ValueError(why)
        return extra


__all__ = ["Catalog", "BotInfo", "BrokenModule", "DuplicateBotError", "where",
           "installed_entry_points", "BUILTIN_MODULES", "ENTRY_POINT_GROUP", "BUILT_IN",
           "MODULES_PER_SUBMISSION"]
