"""The code identity of a bot declared by a TOML file: everything it can read when it runs.

- its own files: its whole folder when the folder is its own (a bot's subfolder of a bots folder,
  or a TOML file given alone), else (a bots folder shared with other bots) its TOML file and the
  paths of the folder its command and `files` name (`own_paths`); what is left out of a folder
  (caches, hidden entries, logs, tournament folders) is kdtourney.bots.files's rule;
- what its command runs outside its folder, resolved: a program given by a relative path
  (`../build/mybot`), a file argument (`node ../bot.js`), the package of `python -m pkg` (found
  as the interpreter finds it: in the folder first, then in this Python's installation), the
  folders and jars of a Java class path (`java -cp build:lib/x.jar Main`, also `-classpath`,
  `--class-path`);
- the paths the TOML file lists in `files` (relative to its folder, or absolute);
- the command as declared, and the name and version it answers to hello.

A program found on the PATH or given by an absolute path (`python3`, `java`, `/usr/bin/node`) is
the runtime, not the bot: it is not hashed.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from kdtourney.bots.external.declaration import Program
from kdtourney.bots.files import files_sha256, tree

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


def inside(path, folder) -> bool:
    """Whether `path` lies in `folder` (or is it), both with their links resolved."""
    return Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder))


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


def program_files(program: Program) -> dict[str, Path]:
    """{name: path} of every file of the bot's identity; a name is the path relative to the
    bot's folder (`../lib/x.jar` outside it), so a copy of the folder elsewhere is the same bot."""
    found = {}
    for root in dict.fromkeys([*own_paths(program), *run_paths(program)]):
        if not root.exists():
            continue
        for path in tree(root):
            found.setdefault(os.path.relpath(path.resolve(), Path(program.cwd).resolve()), path)
    return found


def program_identity(program: Program, hello: dict | None) -> dict:
    """The code identity of this bot (see the entrants table): the declared command, a sha256
    over its files (`program_files`), and what it answered to hello."""
    files = program_files(program)
    hello = hello or {}
    return {"kind": "kdtp", "command": list(program.declared or program.command),
            "files_sha256": files_sha256((name, path.read_bytes()) for name, path in files.items()),
            "files": len(files), "bot_name": hello.get("name"), "bot_version": hello.get("version")}
