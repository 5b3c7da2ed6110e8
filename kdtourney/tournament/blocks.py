"""A store's blocks: what each block of games plays, as the store records it (table `blocks`,
kdtourney.store), and the games played from those records.

A block record is a dict: block, first_game, n_players, seats (the entrant labels at
arrangement 0), entrants ({label: canonical spec} of the labels it seats, parameters included)
and deal_seeds (as played: keyed with the store's seed secret if it has one). Every command
records its blocks the same way, when its feed hands them to the game service
(`runner.schedule_blocks`): `run` the blocks of its plan, `sprt` each chunk's, `tune` each
batch's (theta+ and theta- with the iteration's values), `ladder` the tables its matchmaker
chose. The games of a block follow from its record and the tournament's seed alone
(`games_of`), so a block recorded before a kill is played after it exactly as it would have been.
"""

from __future__ import annotations

import collections
from dataclasses import replace

from kdtourney.tournament import schedule


def of_plan(labels, specs, games) -> list[dict]:
    """The records of the blocks of planned games (GameSpecs, every rotation of each block;
    seats index `labels` and `specs`), deal_seeds left to `games_of`."""
    out = []
    for g in games:
        if g is not None and g.arrangement == 0:
            seats = [labels[e] for e in g.seats]
            out.append(dict(block=g.block, first_game=g.game, n_players=g.n_players, seats=seats,
                            entrants={labels[e]: specs[e] for e in g.seats}))
    return out


def entrants_of(blocks, base=()) -> list[tuple]:
    """The (label, spec) pairs the blocks seat: `base` first, then each new pair in the order the
    blocks seat them (a tune's theta+ is one label with another spec in every iteration)."""
    pairs = list(base)
    seen = set(pairs)
    for b in blocks:
        for label in b["seats"]:
            pair = (label, b["entrants"][label])
            if pair not in seen:
                seen.add(pair)
                pairs.append(pair)
    return pairs


def seated(tournament, pairs):
    """`tournament`'s fixed settings with the entrants `pairs` ((label, spec), in order): the
    table the game service plays blocks seating them on."""
    return replace(tournament, entrants=tuple(p[0] for p in pairs),
                   specs=tuple(p[1] for p in pairs))


def games_of(blocks, seed: int, dynasty: bool, secret: str | None = None, base=(),
             planned=None) -> tuple[list[tuple], list]:
    """(the entrants, `entrants_of(blocks, base)`; the games of `blocks`, GameSpecs whose seats
    index those pairs, their seeds keyed with `secret` if given). Each record gains its
    deal_seeds as played. planned: the blocks' games as a tournament's plan made them (seats
    indexing `base`), not made again."""
    pairs = entrants_of(blocks, base)
    if planned is None:
        index = {pair: i for i, pair in enumerate(pairs)}
        games = []
        for b in blocks:
            table = tuple(index[(label, b["entrants"][label])] for label in b["seats"])
            games += schedule.block_games(seed, int(b["block"]), int(b["first_game"]), table,
                                          dynasty)
    else:
        games = list(planned)
    if secret is not None:
        games = [schedule.keyed(g, secret) for g in games]
    deals = {g.block: g.deal_seeds for g in games if g.arrangement == 0}
    for b in blocks:
        b["deal_seeds"] = list(deals[int(b["block"])])
    return pairs, games


SCORED_COLUMNS = ["game", "seat", "entrant", "rank", "block", "n_players"]  # what a score reads


class Incoming:
    """The result rows of blocks as their games are stored (a feed's, told by the driver), kept
    until the feed takes a whole block's: every statistic reads a block once it is whole, and a
    whole block's games do not change."""

    def __init__(self):
        self.counts: collections.Counter = collections.Counter()  # block -> games stored
        self.rows: dict = collections.defaultdict(list)  # block -> result rows (SCORED_COLUMNS)
        self.players: dict = {}  # block -> its games

    def add(self, spec, results) -> None:
        """A game stored: its GameSpec and result rows (none for a failed game)."""
        self.counts[spec.block] += 1
        self.players[spec.block] = spec.n_players
        self.rows[spec.block] += [dict(r, block=spec.block, n_players=spec.n_players)
                                  for r in results]

    def whole(self, block: int) -> bool:
        """Every game of `block` is stored."""
        return block in self.players and self.counts[block] >= self.players[block]

    def take(self, blocks):
        """The rows of `blocks` (whole ones) as a results table ordered by game and seat, no
        longer kept."""
        import pandas as pd  # start-up time: pandas is imported only where a table is made

        rows = []
        for b in blocks:
            rows += self.rows.pop(b, [])
            self.drop(b)
        return pd.DataFrame(rows, columns=SCORED_COLUMNS).sort_values(["game", "seat"],
                                                                     kind="stable")

    def drop(self, block: int) -> None:
        """Forget `block` (taken, or never to be whole: cancelled)."""
        self.counts.pop(block, None)
        self.rows.pop(block, None)
        self.players.pop(block, None)


__all__ = ["of_plan", "entrants_of", "seated", "games_of", "Incoming", "SCORED_COLUMNS"]
