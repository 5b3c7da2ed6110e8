"""Bot folders, read without running anything: which folders, and what they hold.

    bots_folders    the folders searched: those asked for, KDTOURNEY_BOTS_DIR's, ./bots/;
                    BotsDirError (a UserError) for one asked for that is not a folder
    bot_subfolders  the subfolders of a bots folder that are each a bot's own folder
    files_named     the files of a folder a TOML bot's command names (its scripts)
    names_read      the bot names a module's source shows plainly (for a refused module)
    NOT_BOT_MODULES build and test scripts, never bot modules
"""

import ast
import os
from pathlib import Path

from kdtourney.errors import UserError
from kdtourney.external import load_toml
from kdtourney.external.files import is_run_folder, left_out, read_file
from kdtourney.registry.bundles import BUNDLE_LIMIT, TooDeep, declared_files, parse_source

NOT_BOT_MODULES = ("setup.py", "build.py", "conftest.py")  # build and test scripts
ENV_VAR = "KDTOURNEY_BOTS_DIR"
CWD_FOLDER = "bots"


class BotsDirError(UserError):
    """A bots folder that was asked for does not exist."""


def bots_folders(bots_dirs, env: bool, cwd: bool) -> list[Path]:
    """The folders to search, resolved, each once: `bots_dirs` (a path or paths), then with `env`
    the folders of KDTOURNEY_BOTS_DIR (os.pathsep-separated), then with `cwd` ./bots/ if it is
    there. BotsDirError for a folder of the first two that is not one."""
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


def files_named(command, folder: Path, origin_folder: str) -> set[str]:
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


def names_read(source: str) -> list[str]:
    """The bot names a module's source shows plainly (the last `name = "..."` of each top-level
    class), for a module refused before it runs: naming one of its bots then says why. A guess
    for that message only; what a module defines is learned by running it (or asking it in a
    sandbox)."""
    try:
        parsed = parse_source(source)
    except TooDeep:
        parsed = None
    names = []
    for node in parsed.body if parsed is not None else ():
        if isinstance(node, ast.ClassDef):
            found = [s.value.value for s in node.body if isinstance(s, ast.Assign)
                     and any(isinstance(t, ast.Name) and t.id == "name" for t in s.targets)
                     and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)]
            names += found[-1:]
    return names


__all__ = ["bots_folders", "bot_subfolders", "files_named", "names_read", "BotsDirError",
           "NOT_BOT_MODULES", "ENV_VAR", "CWD_FOLDER"]
