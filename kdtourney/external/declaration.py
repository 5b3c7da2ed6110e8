"""What a bot is before it runs: a `Program` (how to start it) declared by a TOML file of a bots
folder (`load_toml`), or `kdtourney serve SPEC` for a Python bot played in its own process."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from kdtourney.external.files import read_file

TOML_LIMIT = 1 << 20  # bytes of a bot's TOML file kdtourney reads
TOML_DEPTH = 32       # arrays and inline tables nested in it that kdtourney reads
# what opens or closes a nesting in TOML, and the strings and comments where nothing does
_TOML_TOKEN = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"'
                         r"|'[^'\n]*'|#[^\n]*|[\[\]{}]", re.DOTALL)


@dataclass(frozen=True)
class Program:
    """How to start a bot. name: the bot's name in the registry; command: the argv, its program
    resolved; cwd: the working directory; origin: the TOML file (or 'kdtourney serve');
    declared: the command as the TOML file wrote it; reads: the files it says it reads (a TOML
    file's `files`, a served bot's sources file): part of a TOML bot's identity
    (kdtourney.external.identity), and a sandbox shows them. trusted: a served bot of
    kdtourney or of the installation (not of a bots folder), whose code the harness runs too.
    own_folder: cwd is the bot's own folder (a TOML file alone in it, or a bot's subfolder of a
    bots folder), all of it the bot's; False: a bots folder it shares with other bots, of which
    only its TOML file and the files its command and `files` name are its own. files_sha256: the
    digest of its files as the run recorded it (a worker's, `BotRegistry.pin`): its sandbox
    shows those files or does not start it (kdtourney.external.identity.snapshot)."""

    name: str
    command: tuple
    cwd: str
    origin: str
    declared: tuple = ()
    reads: tuple = ()
    trusted: bool = False
    own_folder: bool = True
    files_sha256: str | None = None

    @property
    def executable(self) -> str | None:
        """The program the command runs, as found (a path), None when it is not there."""
        first = self.command[0]
        if os.sep in first:
            return first if os.access(first, os.X_OK) and os.path.isfile(first) else None
        return shutil.which(first)


@dataclass(frozen=True)
class Declared:
    """A bot declared by a TOML file: its program, description and default options."""

    program: Program
    description: str
    options: dict


def load_toml(path: Path, origin: str | None = None, own_folder: bool = True) -> Declared:
    """The bot a TOML file declares: `name`, `command` (a list, or a string split like a shell
    would), optional `description`, `files` (other paths the bot reads, part of its identity)
    and `[options]` (defaults: int, float, bool or str). Relative paths in the command and `files`
    resolve against the file's folder, which is also the working directory; own_folder: whether
    that folder is the bot's own (see Program). ValueError with a one-line message for a file
    that is not such a declaration."""
    origin = origin or str(path)
    try:
        text = read_file(path, TOML_LIMIT).decode("utf-8")
        nested(text, TOML_DEPTH)
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # tomllib's errors, Unreadable
        raise ValueError(f"not a readable TOML file: {exc}") from None
    except RecursionError:  # (nested() refuses what could get there first)
        raise ValueError(f"not a readable TOML file: nested more than {TOML_DEPTH} deep, "
                         "deeper than kdtourney reads") from None
    unknown = sorted(set(data) - {"name", "command", "description", "files", "options"})
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r} (a bot file has name, command, description, "
                         "files and [options])")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("no name: write name = \"mybot\"")
    command = data.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    if not command or not isinstance(command, list) or not command[0] \
            or not all(isinstance(a, str) for a in command):
        raise ValueError("no command: write command = [\"./mybot\", \"--an-argument\"]")
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise ValueError("options must be a table: [options] then key = default lines")
    for key, value in options.items():
        if not isinstance(value, (bool, int, float, str)):
            raise ValueError(f"option {key} is a {type(value).__name__}: a default is an int, "
                             "float, bool or string")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ValueError("description must be a string")
    files = data.get("files", [])
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        raise ValueError("files must be a list of paths: files = [\"../lib/engine.jar\"]")
    folder = str(Path(origin).parent)
    first = command[0]
    if os.sep in first and not os.path.isabs(first):
        first = os.path.normpath(os.path.join(folder, first))
    program = Program(name=name, command=(first, *command[1:]), cwd=folder, origin=origin,
                      declared=tuple(command),
                      reads=tuple(os.path.normpath(os.path.join(folder, f)) for f in files),
                      own_folder=own_folder)
    return Declared(program, description.strip(), dict(options))


def nested(text: str, depth: int) -> None:
    """ValueError when the TOML `text` nests arrays or inline tables more than `depth` deep
    (strings and comments aside), read without recursion: tomllib recurses once per level."""
    level = 0
    for match in _TOML_TOKEN.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            level += 1
            if level > depth:
                raise ValueError(f"arrays or tables nested more than {depth} deep, deeper "
                                 "than kdtourney reads")
        elif token in ("]", "}"):
            level = max(level - 1, 0)


SERVED = "kdtourney serve"   # the origin of a Python bot served in its own process


def serve_program(spec: str, sources_file: str, trusted: bool = False) -> Program:
    """`kdtourney serve SPEC` with the bot sources of `sources_file` (JSON {origin: text}): a
    Python bot in its own process, exactly as the harness would play it in-process."""
    command = (sys.executable, "-m", "kdtourney", "serve", spec, "--sources", sources_file)
    return Program(name=spec, command=command, cwd=os.getcwd(), origin=SERVED,
                   reads=(sources_file,), trusted=trusted)
