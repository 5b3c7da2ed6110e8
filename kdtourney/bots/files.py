"""Which files of a folder are a bot's, and a digest over files.

One rule, used wherever a bot's files are listed (shipped to workers, hashed into its identity,
watched by a ladder): everything under the folder but what a bot or its tools leave there without
it being the bot's code:
- caches: `__pycache__` folders and `.pyc` files;
- hidden entries (a name starting with '.': `.git`, `.cache`, `.venv`);
- logs: files ending in `.log` (a bot run without `--sandbox` may write one beside itself; it
  would otherwise make the bot a new version at every scan);
- tournament folders (holding a `tournament.sqlite`): a run's results, not a bot.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

STORE = "tournament.sqlite"  # a folder holding one is a tournament folder, not a bot's code
LOG_SUFFIX = ".log"


def left_out(name: str) -> bool:
    """Whether a file or folder named `name` is left out of a bot's files (see the module
    docstring; a tournament folder is told by its content, see `is_run_folder`)."""
    return name.startswith(".") or name == "__pycache__" or name.endswith((".pyc", LOG_SUFFIX))


def is_run_folder(path) -> bool:
    return os.path.isfile(os.path.join(path, STORE))


def tree(root: Path) -> list[Path]:
    """`root` itself if it is a file, else every file under it but what is left out, sorted.
    Links to folders are not followed; a link to a file is listed (callers that must keep a bot
    to its folder check where it leads)."""
    root = Path(root)
    if root.is_file():
        return [root]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not left_out(d)
                         and not is_run_folder(os.path.join(folder, d)))
        found += [Path(folder, f) for f in files if not left_out(f)]
    return sorted(found)


def files_sha256(files) -> str:
    """sha256 over (relative name, bytes) pairs, in name order: names and contents count, not
    where the files are."""
    h = hashlib.sha256()
    for name, data in sorted(files):
        h.update(name.encode("utf-8") + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


__all__ = ["tree", "left_out", "is_run_folder", "files_sha256", "STORE"]
