"""kdtourney.testing.check_bot: passes good bots, names what is wrong with bad ones."""

import random
import time
from pathlib import Path

import numpy as np
import pytest

from kdtourney import testing
from kdtourney.bots.random_bot import RandomBot
from kdtourney.registry import BotRegistry
from kdtourney.testing import BotCheck, check_bot

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "bots"
GAMES = 2 + 3 + 3 + 4 + 2 + 5 * 2  # each seat vs random; self-play and its replay per setting


def test_random_passes():
    check = check_bot(RandomBot)
    assert check == BotCheck(ok=True, problems=[], games=GAMES, bot="RandomBot")
    assert str(check) == f"check_bot(RandomBot): {GAMES} games, no problems"
    assert check_bot(RandomBot, strict=True).ok


def test_example_bot_loads_from_its_folder_and_passes():
    registry = BotRegistry([EXAMPLES], entry_points=False)
    info = registry.bots["crown-grabber"]
    assert info.origin == str(EXAMPLES / "crown-grabber" / "crown_grabber.py")
    assert info.parameters == {"prefer_high": True}
    assert len((EXAMPLES / "crown-grabber" / "crown_grabber.py").read_text().splitlines()) < 40
    assert check_bot(info.cls, strict=True).games == GAMES
    assert check_bot(info.cls, prefer_high=False).ok


class Illegal(RandomBot):
    name = "illegal"

    def act(self, view):
        return 5000 if view.round >= 3 else super().act(view)


class Raising(RandomBot):
    name = "raising"

    def act(self, view):
        if view.phase == "claim" and view.round == 2:
            raise KeyError("no such domino")
        return super().act(view)


class TimeSeeded(RandomBot):
    name = "time-seeded"

    def setup(self, seat, rules, seed):
        self._rng = np.random.default_rng(time.time_ns())


class GlobalRandom(RandomBot):
    name = "global-random"

    def act(self, view):
        return random.choice(view.legal_actions())


def only(check, text):
    assert not check.ok and check.problems
    assert all(text in p for p in check.problems), check.problems
    assert all("\n" not in p for p in check.problems)


def test_illegal_actions_are_caught():
    check = check_bot(Illegal)
    only(check, "act returned 5000, which is not legal here")
    assert "2 players vs random, game seed 0, seat 1, move " in check.problems[0]
    assert any("Mighty Duel self-play" in p for p in check.problems)


def test_exceptions_are_caught_with_the_message_and_the_seat():
    check = check_bot(Raising)
    only(check, "act raised KeyError: 'no such domino' (at test_check_bot.py:")
    assert any("4 players vs random, game seed 14, seat 4, move" in p for p in check.problems)
    assert all("(claim)" in p for p in check.problems)


@pytest.mark.parametrize("bot", [TimeSeeded, GlobalRandom])
def test_nondeterminism_is_caught(bot):
    check = check_bot(bot)
    only(check, "not deterministic under a fixed seed")
    assert len(check.problems) >= 4  # a random first claim cannot repeat in every setting


def test_missing_or_empty_name():
    class Nameless(RandomBot):
        name = ""

    check = check_bot(Nameless)
    assert check.problems == ["Nameless.name is '': set the class attribute `name` to the name "
                              "tournaments call the bot by"]

    class NoName:  # not even a Bot
        def setup(self, seat, rules, seed):
            pass

        def act(self, view):
            return view.legal_actions()[0]

    problems = check_bot(NoName).problems
    assert problems[0] == "NoName is not a subclass of kdtourney.bots.Bot"
    assert problems[1].startswith("NoName.name is None")


def test_actions_that_are_not_ints():
    class Floaty(RandomBot):
        name = "floaty"

        def act(self, view):
            return float(super().act(view))

    only(check_bot(Floaty), "(float), not an int from view.legal_actions()")

    class NumpyInts(RandomBot):  # numpy integers are fine
        name = "numpy-ints"

        def act(self, view):
            return np.int64(super().act(view))

    assert check_bot(NumpyInts).ok


def test_changing_the_game_during_act_is_caught(monkeypatch):
    games = []

    class Recorded(testing.Game):  # lets the vandal reach the real game, as no bot should
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            games.append(self)

    class Vandal(RandomBot):
        name = "vandal"

        def act(self, view):
            games[-1].history.append(0)
            return super().act(view)

    monkeypatch.setattr(testing, "Game", Recorded)
    only(check_bot(Vandal), "the game changed during act; a bot must only read its view")


def test_constructor_and_setup_failures():
    class Needs(RandomBot):
        name = "needs"

        def __init__(self, depth):
            super().__init__()

    check = check_bot(Needs)
    assert check.games == 0 and len(check.problems) == 2
    assert check.problems[0] == "every parameter of Needs needs a default; depth has none"
    assert check.problems[1].startswith("Needs() raised TypeError: ")
    assert "missing 1 required positional argument: 'depth'" in check.problems[1]
    assert check_bot(Needs, depth=2).problems == [check.problems[0]]

    class BadSetup(RandomBot):
        name = "bad-setup"

        def setup(self, seat, rules, seed):
            if rules.variant == "duel":
                raise NotImplementedError("no Mighty Duel yet")
            super().setup(seat, rules, seed)

    check = check_bot(BadSetup)
    only(check, "Mighty Duel")
    assert check.problems[0] == ("Mighty Duel vs random, game seed 16, seat 1: setup raised "
                                 "NotImplementedError: no Mighty Duel yet (at test_check_bot.py:"
                                 + check.problems[0].rsplit(":", 1)[1])
    assert len(check.problems) == 3  # 2 seats vs random, the self-play game


def test_strict_raises_listing_the_problems():
    with pytest.raises(AssertionError) as err:
        check_bot(Illegal, strict=True)
    text = str(err.value)
    assert text.startswith("check_bot(Illegal): ") and "problem(s):\n- " in text
    assert "act returned 5000" in text and "... and " in text  # long lists are cut at ten


def test_params_reach_the_bot_and_seed_moves_the_games():
    seen = []

    class Recording(RandomBot):
        name = "recording"

        def __init__(self, depth: int = 1):
            super().__init__()
            seen.append(depth)

    assert check_bot(Recording, depth=3).ok and set(seen) == {3}
    assert "game seed 100," in check_bot(Illegal, seed=100).problems[0]


BAD_KDTP = """import json, sys
for line in sys.stdin:
    kind = json.loads(line)["type"]
    if kind == "hello":
        print(json.dumps({"type": "hello", "name": "claims-99"}), flush=True)
    elif kind == "act":
        print(json.dumps({"type": "action", "action": {"claim": 99}}), flush=True)
    elif kind == "quit":
        break
"""


@pytest.mark.process
def test_a_bot_by_name_is_made_as_the_harness_makes_it(tmp_path):
    """By name: a folder's Python bot is checked as its class is; a KDTP program plays in its own
    process (its illegal answer caught, its process gone after); a name that is no bot is a
    problem, not an exception."""
    assert check_bot("crown-grabber:prefer_high=false", bots_dirs=[EXAMPLES], strict=True).ok
    folder = tmp_path / "claims-99"
    folder.mkdir()
    (folder / "claims_99.py").write_text(BAD_KDTP)
    (folder / "claims-99.toml").write_text(
        'name = "claims-99"\ncommand = ["python3", "claims_99.py"]\n')
    check = check_bot("claims-99", bots_dirs=[tmp_path])
    assert not check.ok and check.bot == "claims-99"
    assert "answered {\"claim\":99}, not one of the" in check.problems[0]
    assert not [p for p in Path("/proc").glob("[0-9]*/cmdline") if b"claims_99.py" in _read(p)]
    unknown = check_bot("no-such-bot", bots_dirs=[tmp_path])
    assert unknown.problems[0].startswith("unknown bot 'no-such-bot'")


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # the process ended meanwhile
        return b""
