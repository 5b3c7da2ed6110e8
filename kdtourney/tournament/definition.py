"""What a tournament is: entrants, format, table sizes, rules, games, seed (`Tournament`), checked
and built from user input by `prepare`.

A `Tournament` defines every game: the store keeps it, and a run on an existing folder must be the
same tournament (`differences`).

Entrants are labelled by their canonical spec (`mcts:c=0.7:iterations=2000`). In a round robin or a
gauntlet, the same spec given twice is two entrants, labelled `random#1`, `random#2` (an A/A test);
in a lineup, the same spec in several seats is one entrant holding several seats.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass, field

from kdtourney import errors
from kdtourney.bots.clock import TimeControl, parse_time_control
from kdtourney.engine import Rules
from kdtourney.registry import EntrantError
from kdtourney.tournament import schedule

RULE_OPTIONS = ("variant", "three_player", "harmony", "middle_kingdom", "tiebreak", "first_picks")
DEFAULT_PLAYERS = (2,)


class ArenaError(errors.UserError):
    """Bad tournament input or state; the message is one line, meant for the user."""


class HarnessError(errors.HarnessError):
    """A bug of kdtourney's in a process that plays games (a worker), not bad input: the message
    is one line, `trace` the full traceback of the process where it happened."""

    def __init__(self, message: str, trace: str = ""):
        super().__init__(message)
        self.trace = trace


@dataclass(frozen=True)
class Tournament:
    """The definition of a tournament (everything that decides which games are played and how).

    entrants: labels; specs: the canonical entrant spec of each label; format: round-robin,
    gauntlet or lineup; candidate: entrant index (gauntlet); lineup: entrant index per seat;
    players: table sizes, alternating by block; rules: the Rules options other than players;
    games: games asked for (the plan rounds up to whole blocks); seed; dynasty; move_time_limit (s);
    clock: the rest of the time control, {"bank_s", "increment_s", "first_move_s"} (None: none).
    """

    entrants: tuple
    specs: tuple
    format: str
    players: tuple
    games: int
    seed: int
    rules: dict = field(default_factory=dict)
    candidate: int | None = None
    lineup: tuple | None = None
    dynasty: bool = False
    move_time_limit: float | None = None
    clock: dict | None = None

    @property
    def time_control(self) -> TimeControl:
        """The time control every seat plays under (kdtourney.bots.clock)."""
        return TimeControl(move_s=self.move_time_limit, **(self.clock or {}))

    def rules_for(self, players: int) -> Rules:
        return Rules(players=players, **self.rules)

    def plan(self) -> schedule.Plan:
        return schedule.plan(self.format, len(self.entrants), self.players, self.games, self.seed,
                             dynasty=self.dynasty, candidate=self.candidate, lineup=self.lineup)

    def tables(self) -> list[tuple]:
        """(block, first game, table at arrangement 0: entrant indexes) of the plan's blocks,
        without their games (`schedule.tables`)."""
        comps = {p: schedule.compositions(self.format, len(self.entrants), p, self.candidate,
                                          self.lineup) for p in dict.fromkeys(self.players)}
        return schedule.tables(comps, tuple(self.players), self.games)

    def to_dict(self) -> dict:
        d = asdict(self)
        for key in ("entrants", "specs", "players", "lineup"):
            if d[key] is not None:
                d[key] = list(d[key])
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Tournament:
        d = dict(d)
        for key in ("entrants", "specs", "players", "lineup"):
            if d.get(key) is not None:
                d[key] = tuple(d[key])
        return cls(**d)

    def describe(self) -> str:
        """'greedy vs random, round-robin, 2-player' and the like."""
        if self.format == schedule.LINEUP and self.lineup is not None:
            who = ", ".join(self.entrants[i] for i in self.lineup)
        elif self.format == schedule.ROUND_ROBIN or self.candidate is None:
            who = " vs ".join(self.entrants)
        else:
            who = f"{self.entrants[self.candidate]} against " + ", ".join(
                e for i, e in enumerate(self.entrants) if i != self.candidate)
        sizes = "/".join(str(p) for p in self.players)
        extra = [k.replace("_", "-") if v is True else f"{k.replace('_', '-')} {v}"
                 for k, v in self.rules.items() if v != Rules.__dataclass_fields__[k].default]
        if self.dynasty:
            extra.append("dynasty")
        return f"{who} ({self.format}, {sizes}-player{', ' if extra else ''}{', '.join(extra)})"


def differences(stored: dict, asked: dict) -> list[str]:
    """What differs between two tournament dicts, as 'key: stored vs asked' strings."""
    out = []
    for key in sorted(set(stored) | set(asked)):
        a, b = stored.get(key), asked.get(key)
        if a != b:
            if isinstance(a, dict) and isinstance(b, dict):
                out += [f"{key}.{d}" for d in differences(a, b)]
            else:
                out.append(f"{key}: {_show(a)} (stored) vs {_show(b)} (now)")
    return out


def _show(value) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _labels(specs: list[str]) -> list[str]:
    """Canonical specs -> labels; a spec given twice becomes spec#1, spec#2, ..."""
    counts = {s: specs.count(s) for s in specs}
    seen: dict[str, int] = {}
    out = []
    for s in specs:
        if counts[s] > 1:
            seen[s] = seen.get(s, 0) + 1
            out.append(f"{s}#{seen[s]}")
        else:
            out.append(s)
    return out


def split_list(text: str | None) -> list[str]:
    """'a, b,c' -> ['a', 'b', 'c'] (entrant lists; parameters use ':' so commas are safe)."""
    if text is None:
        return []
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_players(text) -> tuple:
    """'2', '2,4' or [2, 4] -> (2, 4); ArenaError for anything but 2, 3 and 4."""
    items = split_list(text) if isinstance(text, str) else list(text)
    if not items:
        raise ArenaError("--players needs 2, 3 or 4, or a list such as 2,4")
    out = []
    for item in items:
        try:
            value = int(item)
        except (TypeError, ValueError):
            raise ArenaError(f"--players: {item!r} is not a number of players (2, 3 or 4)"
                             ) from None
        if value not in (2, 3, 4):
            raise ArenaError(f"--players: a table has 2, 3 or 4 players, not {value}")
        if value not in out:
            out.append(value)
    return tuple(out)


def full_rules(players: tuple, rules: dict) -> dict:
    """Every rule option (`RULE_OPTIONS`), the given ones (None: not given) over the defaults,
    checked at each table size; ArenaError for an unknown option or impossible rules."""
    rules = {k: v for k, v in rules.items() if v is not None}
    unknown = set(rules) - set(RULE_OPTIONS)
    if unknown:
        raise ArenaError(f"unknown rule option {sorted(unknown)[0]!r}")
    full = {k: rules.get(k, Rules.__dataclass_fields__[k].default) for k in RULE_OPTIONS}
    for p in players:
        try:
            Rules(players=p, **full)
        except ValueError as exc:
            raise ArenaError(f"impossible rules: {exc}") from None
    return full


def prepare(registry, *, bots=None, players=None, games: int = 100, seed: int | None = None,
            gauntlet: str | None = None, lineup=None, dynasty: bool = False,
            move_time_limit: float | None = None, time_control: str | None = None,
            first_move_time: float | None = None, **rules) -> Tournament:
    """Check user input and build the Tournament. registry: a BotRegistry (bots are checked against
    it: known bot, known parameters). bots / lineup: lists of specs or comma-separated text;
    players: table sizes (default 2; a lineup's length); seed None: a fresh one; time_control:
    'BANK+INCREMENT' seconds (`clock_of`). Raises ArenaError.
    """
    bots = split_list(bots) if isinstance(bots, str) or bots is None else list(bots)
    lineup = split_list(lineup) if isinstance(lineup, str) or lineup is None else list(lineup)
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ArenaError(f"--games must be a positive number of games, not {games}")
    if move_time_limit is not None and not move_time_limit > 0:
        raise ArenaError("--move-time-limit must be a positive number of seconds, not "
                         f"{move_time_limit:g}")
    clock = clock_of(move_time_limit, time_control, first_move_time)
    if seed is not None and not 0 <= seed < 2**63:
        raise ArenaError(f"--seed must be between 0 and 2**63-1, not {seed}")
    if lineup and (bots or gauntlet):
        raise ArenaError("--lineup fixes the table: give it without --bots and --gauntlet")
    if not lineup and not bots and not gauntlet:
        raise ArenaError("no entrants: give --bots (e.g. --bots greedy,random) or --lineup")

    registry.check([*(bots or ()), *(lineup or ()), *([gauntlet] if gauntlet else [])])

    def canonical(spec):
        try:
            return registry.resolve(spec).spec
        except EntrantError as exc:
            raise ArenaError(str(exc)) from None

    candidate = None
    seats = None
    if lineup:
        fmt = schedule.LINEUP
        seat_specs = [canonical(s) for s in lineup]
        specs = list(dict.fromkeys(seat_specs))
        labels = specs
        seats = tuple(specs.index(s) for s in seat_specs)
        if players is None:
            players = (len(seats),)
        players = parse_players(players)
        if players != (len(seats),):
            raise ArenaError(f"the lineup has {len(seats)} seats but --players is "
                             f"{','.join(map(str, players))}")
        if len(seats) not in (2, 3, 4):
            raise ArenaError(f"a lineup has 2, 3 or 4 seats, not {len(seats)}")
    else:
        specs = [canonical(s) for s in bots]
        if gauntlet:
            fmt = schedule.GAUNTLET
            cand = canonical(gauntlet)
            if cand in specs:
                specs.remove(cand)
            specs = [cand] + specs
            candidate = 0
            if len(specs) < 2:
                raise ArenaError(f"the gauntlet of {cand} needs opponents: list them in --bots")
        else:
            fmt = schedule.ROUND_ROBIN
            if len(specs) < 2:
                raise ArenaError("a round robin needs at least two entrants (for self-play: "
                                 f"--lineup {specs[0]},{specs[0]})")
        labels = _labels(specs)
        players = parse_players(players if players is not None else DEFAULT_PLAYERS)

    full = full_rules(players, rules)
    tournament = Tournament(
        entrants=tuple(labels), specs=tuple(specs), format=fmt, players=players, games=games,
        seed=secrets.randbits(32) if seed is None else int(seed), rules=full, candidate=candidate,
        lineup=seats, dynasty=bool(dynasty),
        move_time_limit=None if move_time_limit is None else float(move_time_limit), clock=clock)
    try:
        schedule.compositions(fmt, len(labels), players[0], candidate, seats)
    except schedule.ScheduleError as exc:
        raise ArenaError(str(exc)) from None
    return tournament


def clock_of(move_time_limit: float | None, time_control: str | None,
             first_move_time: float | None) -> dict | None:
    """The `clock` of a Tournament from the command line's --time-control BANK+INCREMENT and
    --first-move-time (None when neither is given); ArenaError for bad values."""
    if time_control is None and first_move_time is None:
        return None
    try:
        bank, increment = parse_time_control(time_control) if time_control is not None \
            else (None, None)
        control = TimeControl(move_s=move_time_limit, bank_s=bank, increment_s=increment,
                              first_move_s=first_move_time)
    except ValueError as exc:
        text = str(exc)
        if text.startswith("a first-decision limit"):
            text = "--first-move-time needs --move-time-limit or --time-control"
        raise ArenaError(text) from None
    return {k: v for k, v in control.wire().items() if k != "move_s"}


def default_name(tournament: Tournament, stamp: str) -> str:
    """'greedy-vs-random-20250101-120000': entrants (bot names) and a time stamp."""
    names = list(dict.fromkeys(s.split(":")[0] for s in tournament.specs))
    text = "-vs-".join(names) if len(names) <= 4 else \
        f"{'-'.join(names[:3])}-and-{len(names) - 3}-more"
    return f"{text}-{stamp}"


__all__ = ["Tournament", "ArenaError", "HarnessError", "prepare", "differences", "parse_players",
           "split_list", "default_name", "clock_of", "full_rules", "RULE_OPTIONS"]
