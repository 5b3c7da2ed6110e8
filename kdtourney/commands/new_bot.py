"""`kdtourney new-bot NAME`: a minimal bot in a folder of its own, ready to play and to change.

A Python bot (`NAME/NAME.py`, a `Bot` subclass) or, with kdtp=True, a program in its own process
speaking KDTP/1 (`NAME/NAME.toml` declaring `NAME/NAME.py`, a script of the standard library
only, the shape of a program in any language). Both play at once and pass `check_bot`.
"""

import re
import sys
from pathlib import Path

from kdtourney.errors import UserError

#: A bot name new-bot accepts: a registry name (registry.entrants.BOT_NAME) that also makes a
#: module name.
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")

PYTHON_BOT = '''\
"""{name}: a Kingdomino bot (written by `kdtourney new-bot`; change it as you like).

    kdtourney run --bots-dir {bots_dir} --bots {name},greedy,random --games 60    # play it
    python {module_path}    # check it: plays it as the harness will and lists any problem

What a bot sees (`view`) and what it may do: kdtourney's docs/bots.md.
"""

import random

from kdtourney.bots import Bot
from kdtourney.engine import DISCARD, decode_placement


class {cls}(Bot):
    """Places each domino where its score gains most; claims at random."""  # `kdtourney bots`

    name = "{name}"  # how tournaments call it: --bots {name}

    def __init__(self, explore: float = 0.0):
        # parameters: keyword arguments with defaults, set as --bots {name}:explore=0.2
        self.explore = explore

    def setup(self, seat, rules, seed):
        # before every game: draw all randomness from `seed`, and a game replays exactly
        self.rng = random.Random(seed)

    def act(self, view):
        legal = view.legal_actions()  # ints: return one of them
        if view.phase == "claim" or legal == [DISCARD] or self.rng.random() < self.explore:
            return self.rng.choice(legal)
        kingdom, domino = view.kingdom(view.player), view.domino_to_place

        def score_after(action):
            after = kingdom.copy()  # a copy: the view is the bot's own, the game is not touched
            after.place(domino, decode_placement(action))
            return after.score().total
        return max(legal, key=score_after)


if __name__ == "__main__":
    from kdtourney.testing import check_bot

    print(check_bot({cls}))
'''

KDTP_TOML = '''\
# {name}: a Kingdomino bot in its own process (written by `kdtourney new-bot --kdtp`). It speaks
# KDTP/1 on stdin/stdout (kdtourney's docs/protocol.md): any language can; this one is Python.
name = "{name}"
description = "Claims and places at random (a KDTP program)"
command = ["python3", "{module}"]   # run from this file's folder
# [options] would list parameters and their defaults, sent to it in each game message
'''

KDTP_PROGRAM = '''\
"""{name}: a Kingdomino bot as a program of its own, speaking KDTP/1: one JSON object per line on
stdin and stdout (kdtourney's docs/protocol.md). Written by `kdtourney new-bot --kdtp`; it uses
Python's standard library only, so it starts fast and runs under --sandbox as it is.

    kdtourney run --bots-dir {bots_dir} --bots {name},greedy,random --games 60
"""

import json
import random
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()


rng = random.Random(0)
for line in sys.stdin:
    message = json.loads(line)
    kind = message["type"]
    if kind == "hello":
        send({{"type": "hello", "name": "{name}", "version": "0.1"}})
    elif kind == "game":  # before each game: the rules, the dominoes, your seat, a seed
        rng = random.Random(message["seed"])  # all randomness from it: games replay exactly
    elif kind == "act":  # your decision: answer one element of "legal", unchanged
        send({{"type": "action", "action": rng.choice(message["legal"])}})
    elif kind == "quit":
        break
    # "result" (after each game) and types a later version adds need no answer
'''


class NewBotError(UserError):
    """A name or folder new-bot cannot write a bot to; the message is one line."""


def write_new_bot(bots_dir, name: str, kdtp: bool = False, taken=()) -> list[Path]:
    """Write the bot `name` into a new folder `bots_dir/name`; return the files written. taken:
    the names of the bots already known (the built-ins), which a new bot cannot share."""
    if not NAME.match(name):
        raise NewBotError(f"bad bot name {name!r}: start with a letter, then letters, digits, "
                          "_ and - (it names the bot, its folder and its module)")
    if name in taken:
        raise NewBotError(f"there is a bot named {name} already: choose another name")
    stem = name.replace("-", "_")
    if stem in sys.stdlib_module_names or stem == "kdtourney":
        raise NewBotError(f"{name}: its module {stem}.py would hide Python's module {stem}: "
                          "choose another name")
    folder = Path(bots_dir) / name
    if folder.exists():
        raise NewBotError(f"{folder} already exists: choose another name, or remove it first")
    module = stem + ".py"
    cls = "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]", name) if part)
    fields = {"name": name, "module": module, "cls": cls, "bots_dir": Path(bots_dir).as_posix(),
              "module_path": (folder / module).as_posix()}
    files = {module: KDTP_PROGRAM} if kdtp else {module: PYTHON_BOT}
    if kdtp:
        files[name + ".toml"] = KDTP_TOML
    written = []
    try:
        folder.mkdir(parents=True)
        for file, template in files.items():
            path = folder / file
            path.write_text(template.format(**fields), encoding="utf-8")
            written.append(path)
    except OSError as exc:  # a folder that cannot be written
        raise NewBotError(str(exc)) from None
    return written


__all__ = ["write_new_bot", "NewBotError"]
