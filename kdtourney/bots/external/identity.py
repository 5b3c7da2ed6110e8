"""The code identity of a bot declared by a TOML file: everything it can read when it runs.

- every file under the TOML file's folder (the bot's folder and working directory: its program,
  its scripts, its data), caches (__pycache__, .pyc), hidden entries (.git) and tournament
  folders inside it left out;
- what its command runs outside that folder, resolved: a program given by a relative path
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

_CLASS_PATH = ("-cp", "-classpath", "--class-path")
_STORE = "tournament.sqlite"  # a folder holding one is a tournament folder, not the bot's code


def _files_under(root: Path) -> list[Path]:
    """`root` itself if it is a file, else every file under it (sorted) but caches, hidden
    entries and tournament folders."""
    if root.is_file():
        return [root]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__"
                         and not os.path.exists(os.path.join(folder, d, _STORE)))
        found += [Path(folder, f) for f in sorted(files)
                  if not f.startswith(".") and not f.endswith(".pyc")]
    return found


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
    """The paths the command reads besides its folder (see the module docstring), and the
    TOML file's `files`."""
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


def program_files(program: Program) -> dict[str, Path]:
    """{name: path} of every file of the bot's identity; a name is the path relative to the
    bot's folder (`../lib/x.jar` outside it), so a copy of the folder elsewhere is the same bot."""
    found = {}
    for root in [Path(program.cwd), *run_paths(program)]:
        if not root.exists():
            continue
        for path in _files_under(root):
            found.setdefault(os.path.relpath(path.resolve(), Path(program.cwd).resolve()), path)
    return found


def program_identity(program: Program, hello: dict | None) -> dict:
    """The code identity of this bot (see the entrants table): the declared command, a sha256
    over its files (`program_files`), and what it answered to hello."""
    from kdtourney.bots.registry import files_sha256

    files = program_files(program)
    hello = hello or {}
    return {"kind": "kdtp", "command": list(program.declared or program.command),
            "files_sha256": files_sha256((name, path.read_bytes()) for name, path in files.items()),
            "files": len(files), "bot_name": hello.get("name"), "bot_version": hello.get("version")}
