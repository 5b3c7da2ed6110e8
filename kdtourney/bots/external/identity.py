"""The code identity of a bot declared by a TOML file: what the entrants table records of it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from kdtourney.bots.external.declaration import Program


def file_run(program: Program) -> str | None:
    """The file the bot's code is in: the program when it lies in the TOML's folder
    (`./mybot`), else the first argument naming a file there (`node bot.js`, `java -jar
    bot.jar`, `/usr/bin/python3 bot.py`), else the program (found on the PATH)."""
    executable = program.executable
    if executable is None or not os.path.abspath(executable).startswith(program.cwd + os.sep):
        for arg in program.command[1:]:
            path = Path(program.cwd, arg)
            if not arg.startswith("-") and path.is_file():
                return str(path)
    return executable


def program_identity(program: Program, hello: dict | None) -> dict:
    """The code identity of this bot (see the entrants table): the declared command, the
    sha256 of the file it runs, and what it answered to hello."""
    path = file_run(program)
    digest = None
    if path is not None:
        with open(path, "rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
    hello = hello or {}
    return {"kind": "kdtp", "command": list(program.declared or program.command),
            "file_sha256": digest, "bot_name": hello.get("name"),
            "bot_version": hello.get("version")}
