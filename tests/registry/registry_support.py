"""Helpers of the registry's tests: a bot module to write, a registry of given folders only, a
bot of several files, a folder of submissions."""

import sys
import textwrap
from pathlib import Path

from kdtourney.registry import BotRegistry

BOT = '''
from kdtourney.bots import Bot


class {cls}(Bot):
    """{doc}

    More text that is not the description.
    """

    name = "{name}"

    def __init__(self, depth: int = 2, c: float = 0.5, greedy: bool = False,
                 policy: str = "random"):
        self.depth, self.c, self.greedy, self.policy = depth, c, greedy, policy

    def act(self, view):
        return view.legal_actions()[0]
'''


def write_bot(folder: Path, filename: str, name: str, cls: str = "TmpBot", doc: str = "A test bot.",
              extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / filename
    path.write_text(BOT.format(cls=cls, name=name, doc=doc) + textwrap.dedent(extra))
    return path


def local(bots_dirs=(), **kw):
    """A registry of built-ins and the given folders only."""
    return BotRegistry(bots_dirs, env=False, cwd=False, entry_points=False, **kw)


def write_bundled_bot(folder: Path, weight: int = 3) -> Path:
    """A folder bot importing its package wlib/ (with a submodule) and reading weights.json."""
    (folder / "wlib").mkdir(parents=True, exist_ok=True)
    (folder / "wlib" / "__init__.py").write_text("from wlib.net import score\n")
    (folder / "wlib" / "net.py").write_text("def score(w):\n    return w * 2\n")
    (folder / "weights.json").write_text(f'{{"w": {weight}}}')
    return write_bot(folder, "wbot.py", "w-bot", extra='''
        import json
        from pathlib import Path

        import wlib

        KDTOURNEY_FILES = ["wlib", "weights.json"]
        WEIGHT = wlib.score(json.loads((Path(__file__).parent / "weights.json").read_text())["w"])
        ''')


def forget_wlib():
    for name in [m for m in sys.modules if m == "wlib" or m.startswith("wlib.")]:
        del sys.modules[name]


def write_submissions(bots: Path) -> Path:
    """A bots folder of submissions, one subfolder each (alice: a module with its package and
    data, nothing listed; bob: a TOML bot), beside a flat bot and folders that are no bot's."""
    alice = bots / "alice"
    (alice / "alib" / "deep").mkdir(parents=True)
    (alice / "data").mkdir()
    (alice / "alib" / "__init__.py").write_text("from alib.deep.pick import PICK\n")
    (alice / "alib" / "deep" / "pick.py").write_text("PICK = 0\n")
    (alice / "data" / "w.json").write_text('{"w": 5}')
    write_bot(alice, "alice.py", "alice", extra='''
        import json
        from pathlib import Path

        import alib

        WEIGHT = json.loads((Path(__file__).parent / "data" / "w.json").read_text())["w"]
        ''')
    (alice / "play.log").write_text("what it wrote while it played\n")
    (alice / ".cache").mkdir()
    (alice / ".cache" / "x").write_text("hidden")
    (bots / "bob").mkdir()
    (bots / "bob" / "bob.toml").write_text(f'name = "bob"\ncommand = ["{sys.executable}", '
                                           '"bob.py"]\n')
    (bots / "bob" / "bob.py").write_text("print('bob')\n")
    (bots / "bob" / "book.bin").write_bytes(b"\x00\x01")
    write_bot(bots, "flat.py", "flat", cls="Flat")
    (bots / "pkg").mkdir()  # a package: a flat bot's, never a bot's folder
    (bots / "pkg" / "__init__.py").write_text("raise RuntimeError('never imported')\n")
    (bots / "_data").mkdir()  # `_`: data, never a bot's folder
    (bots / "_data" / "tool.py").write_text("raise RuntimeError('never imported')\n")
    (bots / "ladder.txt").write_text("random\n")
    return bots


def forget(*packages):
    for name in [m for m in sys.modules if m.split(".")[0] in packages]:
        del sys.modules[name]
