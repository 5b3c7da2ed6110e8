"""Which games a tournament plays: tables, seat arrangements, blocks and seeds. Pure functions.

    plan(fmt, n_entrants, players, games, seed, ...) -> Plan: every game, in whole blocks
    compositions(fmt, n_entrants, players, ...)   the tables of a format, in the order blocks use
    tables(comps, players, games)                 (block, first game, table) of each block
    block_games(seed, block, first_game, table)   one block's games: its deal, every rotation
    rotations, deal_seed, bot_seed, keyed         the seatings of a table, the seeds of a game
    GameSpec                                      everything a worker needs to play one game
    ScheduleError                                 a format that cannot be scheduled

A block is one deal (three for a dynasty) played under every rotation of its table; game indexes
run over the blocks in order, and with the tournament's seed a game's index fixes everything about
it. The formats and the seeds: docs/commands.md ("How the games are scheduled").
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, replace

import numpy as np

from kdtourney.errors import UserError

ROUND_ROBIN, GAUNTLET, LINEUP = "round-robin", "gauntlet", "lineup"
FORMATS = (ROUND_ROBIN, GAUNTLET, LINEUP)
DYNASTY_DEALS = 3


class ScheduleError(UserError):
    """A format that cannot be scheduled (e.g. a round robin of one entrant)."""


@dataclass(frozen=True)
class GameSpec:
    """Everything a worker needs to play one game (a dynasty counts as one game).

    seats: entrant index per seat; deal_seeds: one deck seed per deal (1, or 3 for a dynasty);
    bot_seeds: per seat, one setup seed per deal.
    """

    game: int
    block: int
    arrangement: int
    n_players: int
    seats: tuple
    deal_seeds: tuple
    bot_seeds: tuple


def covering_multisets(k: int, n: int) -> list[tuple]:
    """Sorted n-tuples over range(k) in which every value occurs at least once (k <= n)."""
    return [c for c in itertools.combinations_with_replacement(range(k), n) if len(set(c)) == k]


def fill(pool: list[int], n: int) -> list[tuple]:
    """Compositions of n seats from `pool`: every n distinct members when the pool is large
    enough, else every multiset that includes each member at least once."""
    if n == 0:
        return [()]
    if len(pool) >= n:
        return [tuple(c) for c in itertools.combinations(pool, n)]
    return [tuple(pool[i] for i in c) for c in covering_multisets(len(pool), n)]


def compositions(fmt: str, n_entrants: int, players: int, candidate: int | None = None,
                 lineup: tuple | None = None) -> list[tuple]:
    """The table compositions of a format at `players` seats, in the order blocks use them."""
    if fmt == ROUND_ROBIN:
        if n_entrants < 2:
            raise ScheduleError("a round robin needs at least two entrants (for self-play use "
                                "--lineup, e.g. --lineup random,random)")
        return fill(list(range(n_entrants)), players)
    if fmt == GAUNTLET:
        if candidate is None or not 0 <= candidate < n_entrants:
            raise ScheduleError("a gauntlet needs a candidate among the entrants")
        others = [i for i in range(n_entrants) if i != candidate]
        if not others:
            raise ScheduleError("a gauntlet needs at least one opponent besides the candidate")
        return [(candidate,) + rest for rest in fill(others, players - 1)]
    if fmt == LINEUP:
        if not lineup or len(lineup) != players:
            raise ScheduleError(f"the lineup has {len(lineup or ())} seats, the tables {players}")
        return [tuple(lineup)]
    raise ScheduleError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")


def rotations(composition: tuple) -> list[tuple]:
    """Every rotation of a table: seat s of arrangement r holds composition[(s - r) % n], so
    arrangement 0 is the composition itself and each member visits every seat once."""
    n = len(composition)
    return [tuple(composition[(s - r) % n] for s in range(n)) for r in range(n)]


def deal_seed(seed: int, block: int, deal: int = 0) -> int:
    """The deck seed of deal `deal` of block `block` (63 bits)."""
    words = np.random.SeedSequence([seed, 0, block, deal]).generate_state(2, np.uint32)
    return int((int(words[0]) << 31) ^ int(words[1])) & (2**63 - 1)


def bot_seed(seed: int, game: int, seat: int, deal: int = 0) -> int:
    """The setup seed of the bot in `seat` of game `game` for deal `deal` (32 bits)."""
    return int(np.random.SeedSequence([seed, 1, game, seat, deal]).generate_state(1, np.uint32)[0])


def keyed(spec: GameSpec, secret: str) -> GameSpec:
    """`spec` with its deal and bot seeds mixed with `secret` (hex): nothing a bot sees then
    tells the tournament seed or the next deals, however small the seed. The deals stay shared
    by the games of a block (and its seats by the rotations)."""
    key = bytes.fromhex(secret)

    def mix(text: str, bits: int) -> int:
        digest = hashlib.blake2b(text.encode(), key=key, digest_size=8).digest()
        return int.from_bytes(digest, "big") >> (64 - bits)

    return replace(spec, deal_seeds=tuple(mix(f"deal:{spec.block}:{k}:{s}", 63)
                                          for k, s in enumerate(spec.deal_seeds)),
                   bot_seeds=tuple(tuple(mix(f"bot:{spec.game}:{seat}:{k}:{s}", 32)
                                         for k, s in enumerate(seeds))
                                   for seat, seeds in enumerate(spec.bot_seeds)))


@dataclass(frozen=True)
class Plan:
    """The schedule of a whole tournament: `games` (GameSpec list), `blocks`, and the cycle length
    (blocks per full cycle of compositions, for the balance guarantees)."""

    games: list
    blocks: int
    cycle: int
    players: tuple = (2,)

    def __len__(self):
        return len(self.games)

    @property
    def cycle_games(self) -> int:
        """Games in a full cycle of compositions (all table sizes included)."""
        return sum(self.players[b % len(self.players)] for b in range(self.cycle))

    @property
    def balanced(self) -> bool:
        """Whether the plan is a whole number of cycles (every composition equally often)."""
        return self.blocks % self.cycle == 0


def plan(fmt: str, n_entrants: int, players, games: int, seed: int, *, dynasty: bool = False,
         candidate: int | None = None, lineup: tuple | None = None) -> Plan:
    """The games of a tournament: at least `games`, rounded up to whole blocks."""
    players = tuple(players)
    if games < 1:
        raise ScheduleError(f"the number of games must be at least 1, not {games}")
    if not players:
        raise ScheduleError("no table size")
    comps = {p: compositions(fmt, n_entrants, p, candidate, lineup) for p in dict.fromkeys(players)}
    # a full cycle: every size has gone through all its compositions a whole number of times
    cycle = len(players) * int(np.lcm.reduce([len(comps[p]) for p in players]))
    out = []
    for block, first, table in tables(comps, players, games):
        out += block_games(seed, block, first, table, dynasty)
    return Plan(out, out[-1].block + 1, cycle, players)


def tables(comps: dict, players: tuple, games: int) -> list[tuple]:
    """(block, first game, table at arrangement 0) of the blocks of at least `games` games: the
    blocks alternate between the table sizes `players`, each cycling through its compositions
    (`comps`: size -> `compositions`)."""
    out, block, first = [], 0, 0
    while first < games:
        p = players[block % len(players)]
        options = comps[p]
        out.append((block, first, options[(block // len(players)) % len(options)]))
        first += p
        block += 1
    return out


def block_games(seed: int, block: int, first_game: int, table: tuple, dynasty: bool = False
                ) -> list[GameSpec]:
    """The games of one block: its deal (three for a dynasty) under every rotation of `table`
    (entrant indexes, arrangement 0), numbered from `first_game`."""
    deals = DYNASTY_DEALS if dynasty else 1
    n = len(table)
    seeds = tuple(deal_seed(seed, block, k) for k in range(deals))
    return [GameSpec(game=first_game + arrangement, block=block, arrangement=arrangement,
                     n_players=n, seats=seats, deal_seeds=seeds,
                     bot_seeds=tuple(tuple(bot_seed(seed, first_game + arrangement, s, k)
                                           for k in range(deals)) for s in range(n)))
            for arrangement, seats in enumerate(rotations(tuple(table)))]


__all__ = ["GameSpec", "Plan", "plan", "tables", "block_games", "compositions", "rotations",
           "fill", "covering_multisets", "deal_seed", "bot_seed", "keyed", "ScheduleError",
           "FORMATS", "ROUND_ROBIN", "GAUNTLET", "LINEUP", "DYNASTY_DEALS"]
