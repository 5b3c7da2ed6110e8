"""The conformance check a bot author runs: `check_bot(MyBot)` plays the bot the way the harness
does and reports what is wrong.

    from kdtourney.testing import check_bot

    def test_my_bot():
        check_bot(MyBot, strict=True, depth=2)   # raises AssertionError listing the problems
"""

import inspect
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kdtourney.bots.base import Bot
from kdtourney.bots.random_bot import RandomBot
from kdtourney.engine import Game, Rules

#: The games check_bot plays: every player count, both three-player setups and Mighty Duel.
SETTINGS = (
    ("2 players", Rules(2)),
    ("3 players (official)", Rules(3, three_player="official")),
    ("3 players (bga)", Rules(3, three_player="bga")),
    ("4 players", Rules(4)),
    ("Mighty Duel", Rules(2, variant="duel")),
)


@dataclass
class BotCheck:
    """The outcome of check_bot: ok when nothing is wrong; problems, one line each; games played."""

    ok: bool
    problems: list[str] = field(default_factory=list)
    games: int = 0
    bot: str = ""

    def __str__(self):
        head = f"check_bot({self.bot}): {self.games} games, "
        if self.ok:
            return head + "no problems"
        lines = [f"- {p}" for p in self.problems[:_SHOWN]]
        if len(self.problems) > _SHOWN:
            lines.append(f"- ... and {len(self.problems) - _SHOWN} more")
        return head + f"{len(self.problems)} problem(s):\n" + "\n".join(lines)


_SHOWN = 10  # problems shown by str(BotCheck); all are in .problems


class _Failure(Exception):
    """A problem that ends the game being played."""


def _exception(exc: BaseException) -> str:
    """'ValueError: message (at mybot.py:12)'."""
    text = f"{type(exc).__name__}: {exc}"
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        text += f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})"
    return text


def _setup_seed(game_seed: int, seat: int) -> int:
    return int(np.random.SeedSequence([game_seed, seat]).generate_state(1)[0])


def _play(label: str, rules: Rules, game_seed: int, players: list, checked: set) -> list:
    """Play one game; return [(seat, action)]. A problem of a bot in a `checked` seat raises
    _Failure; the opponents (the built-in random bot) are trusted."""
    game = Game(rules, game_seed)
    where = f"{label}, game seed {game_seed}"
    for seat, bot in enumerate(players):
        try:
            bot.setup(seat, rules, _setup_seed(game_seed, seat))
        except Exception as exc:
            if seat not in checked:
                raise
            raise _Failure(f"{where}, seat {seat + 1}: setup raised {_exception(exc)}") from exc
    moves: list = []
    while not game.is_over:
        to_act = game.current_player
        assert to_act is not None  # the game is not over
        seat = to_act
        view = game.view(seat)
        if seat not in checked:
            action = players[seat].act(view)
        else:
            at = f"{where}, seat {seat + 1}, move {len(moves)} ({game.phase})"
            before = [a.copy() for a in game.arrays] + [list(game.history)]
            legal = view.legal_actions()
            try:
                action = players[seat].act(view)
            except Exception as exc:
                raise _Failure(f"{at}: act raised {_exception(exc)}") from exc
            after = list(game.arrays) + [game.history]
            if not all(np.array_equal(a, b) for a, b in zip(before[:3], after[:3])) \
                    or before[3] != after[3]:
                raise _Failure(f"{at}: the game changed during act; a bot must only read its view")
            if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
                raise _Failure(f"{at}: act returned {action!r} ({type(action).__name__}), "
                               "not an int from view.legal_actions()")
            if action not in legal:
                raise _Failure(f"{at}: act returned {action}, which is not legal here "
                               f"({len(legal)} legal actions, e.g. {legal[:5]})")
        game.apply(action)
        moves.append((seat, int(action)))
    return moves


def check_bot(bot_class, /, *, strict: bool = False, seed: int = 0, settings=SETTINGS,
              bots_dirs=(), **params) -> BotCheck:
    """Play `bot_class(**params)` as the harness does and report what is wrong.

    bot_class may also be a bot's spec as tournaments name it (`"mybot"`, `"mybot:depth=3"`),
    found as `--bots-dir` finds it (`bots_dirs`; a KDTP program's TOML too, played in its own
    process) and made as the harness makes it.

    In each setting of SETTINGS (2, 3 official, 3 bga and 4 players, Mighty Duel) the bot plays
    once in every seat against the built-in `random` bot, then against itself (one instance per
    seat), and that self-play game is played again with the same instances and setup seeds. The
    instance playing against `random` is reused from game to game, as the harness may do.

    Problems found: a missing or empty `name`; parameters without defaults; a constructor, `setup`
    or `act` that raises; an action not in `view.legal_actions()` or not an int; a game changed
    during `act`; different actions when the same game is replayed with the same seeds. A game ends
    at its first problem. With strict=True a problem raises AssertionError listing them all.

    seed: the first game seed (games use seed, seed+1, ...).
    settings: (label, Rules) pairs to play instead of SETTINGS (rules a bot has data for, such as
    a value network's).
    """
    if isinstance(bot_class, str):
        return _check_spec(bot_class, bots_dirs, strict=strict, seed=seed, settings=settings,
                           **params)
    label = getattr(bot_class, "__name__", repr(bot_class))
    problems = []
    if not (isinstance(bot_class, type) and issubclass(bot_class, Bot)):
        problems.append(f"{label} is not a subclass of kdtourney.bots.Bot")
    name = getattr(bot_class, "name", None)
    if not isinstance(name, str) or not name.strip():
        problems.append(f"{label}.name is {name!r}: set the class attribute `name` to the name "
                        "tournaments call the bot by")
    if hasattr(bot_class, "parameters"):
        try:
            missing = [k for k, v in bot_class.parameters().items() if v is inspect.Parameter.empty]
        except Exception as exc:
            missing = []
            problems.append(f"{label}.parameters() raised {_exception(exc)}")
        if missing:
            problems.append(f"every parameter of {label} needs a default; "
                            f"{', '.join(missing)} has none")

    def make():
        return bot_class(**params)

    return _check_made(make, label, f"{label}({_kwargs(params)})", problems, strict=strict,
                       seed=seed, settings=settings)


def _check_spec(spec: str, bots_dirs, *, strict, seed, settings, **params) -> BotCheck:
    """check_bot of the bot a spec names in `bots_dirs`, made by the registry as the harness makes
    it (a Python class: its class is checked as check_bot checks it)."""
    from kdtourney.registry import BotRegistry

    if params:
        raise TypeError("check_bot: give the parameters of a spec in it (mybot:depth=3)")
    try:
        registry = BotRegistry(bots_dirs, env=False, cwd=False)
        entrant = registry.resolve(spec)
        info = registry.bots[entrant.name]
        if info.program is None and info.cls is not None:  # a Python class
            return check_bot(info.cls, strict=strict, seed=seed, settings=settings,
                             **entrant.kwargs)
        make = registry.factory(entrant)
    except ValueError as exc:  # an unknown bot or parameter, a broken folder: one line each
        return _finish(BotCheck(False, [str(exc)], 0, str(spec)), strict)
    return _check_made(make, entrant.spec, entrant.spec, [], strict=strict, seed=seed,
                       settings=settings)


def _check_made(make, label: str, call: str, problems: list, *, strict, seed, settings):
    """Play the instances `make()` returns (as check_bot describes), then close each, as the
    harness does (a bot in its own process stops then)."""
    made = []

    def new():
        made.append(make())
        return made[-1]

    try:
        check = _play_checks(new, label, call, problems, seed=seed, settings=settings)
    finally:
        for bot in made:
            try:
                getattr(bot, "close", lambda: None)()
            except Exception as exc:
                problems.append(f"close raised {_exception(exc)}")
    check.ok = check.ok and not problems
    return _finish(check, strict)


def _play_checks(make, label, call, problems, *, seed, settings) -> BotCheck:
    try:
        subject = make()
    except Exception as exc:
        problems.append(f"{call} raised {_exception(exc)}")
        return BotCheck(False, problems, 0, label)

    games = 0
    game_seed = seed
    for setting, rules in settings:
        n = rules.players
        for seat in range(n):
            players = [RandomBot() for _ in range(n)]
            players[seat] = subject
            games += 1
            try:
                _play(f"{setting} vs random", rules, game_seed, players, {seat})
            except _Failure as failure:
                problems.append(str(failure))
            game_seed += 1
        try:
            selves = [make() for _ in range(n)]
        except Exception as exc:
            problems.append(f"{call} raised {_exception(exc)}")
            break
        everyone = set(range(n))
        try:
            games += 1
            first = _play(f"{setting} self-play", rules, game_seed, selves, everyone)
            games += 1
            second = _play(f"{setting} self-play replayed", rules, game_seed, selves, everyone)
        except _Failure as failure:
            problems.append(str(failure))
        else:
            if first != second:
                i = next((i for i, (a, b) in enumerate(zip(first, second)) if a != b),
                         min(len(first), len(second)) - 1)
                problems.append(f"{setting} self-play, game seed {game_seed}: not deterministic "
                                f"under a fixed seed: replayed with the same setup seeds, move {i} "
                                f"(seat {first[i][0] + 1}) was {first[i][1]}, then {second[i][1]}; "
                                "draw all randomness from the seed given to setup")
        game_seed += 1
    return BotCheck(not problems, problems, games, label)


def _kwargs(params: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def _finish(check: BotCheck, strict: bool) -> BotCheck:
    if strict and not check.ok:
        raise AssertionError(str(check))
    return check


__all__ = ["check_bot", "BotCheck", "SETTINGS"]
