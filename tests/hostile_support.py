"""Submissions an attacker of a long contest drops into a bots folder (issue 52), and their
clean-up (pytest's own recurses)."""

import os
import shutil
from pathlib import Path

BOT = ("from kdtourney.bots.base import Bot\n\n\nclass {cls}(Bot):\n    name = {name!r}\n\n"
       "    def act(self, view):\n        return view.legal_actions()[0]\n")


def write_hostile_submissions(bots: Path) -> dict:
    """Three tiny submissions that once stopped every command: a folder 1,100 levels deep (in a
    bot's subfolder), a 6 KB TOML file nesting an array 3,000 deep, a valid module
    `X = 1+1+...+1` of 100,000 terms. {what: its path}."""
    (bots / "deep").mkdir(parents=True)
    (bots / "deep" / "deep.py").write_text(BOT.format(cls="Deep", name="deep"))
    fd = os.open(bots / "deep", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(1100):  # by descriptors: the path grows past what one call takes
            os.mkdir("d", dir_fd=fd)
            fd, old = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd), fd
            os.close(old)
    finally:
        os.close(fd)
    (bots / "nested.toml").write_text('name = "nested"\ncommand = ["x"]\nfiles = '
                                      + "[" * 3000 + "]" * 3000 + "\n")
    (bots / "sum.py").write_text("X = " + "+".join(["1"] * 100_000) + "\n")
    return {"folder": bots / "deep" / "deep.py", "toml": bots / "nested.toml",
            "module": bots / "sum.py"}


def remove_deep(folder: Path) -> None:
    """Remove a folder tree of any depth without recursion (pytest's clean-up recurses): each
    folder's subfolders are moved beside `folder` first, so every path stays short."""
    todo, moved = [str(folder)], 0
    while todo:
        here = todo.pop()
        for entry in list(os.scandir(here)):
            if entry.is_dir(follow_symlinks=False):
                moved += 1
                todo.append(os.path.join(os.path.dirname(folder), f".deep-{moved}"))
                os.rename(entry.path, todo[-1])
        shutil.rmtree(here)  # files only by now
