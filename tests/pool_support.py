"""Synthetic tournament stores with known strengths, written through the store API, for the tests
of `kdtourney ratings` and for benchmarks/bench_ratings.py.

Every game is a Plackett-Luce draw: each seat's performance is its entrant's strength (Elo, on the
natural-log scale of Bradley-Terry) plus Gumbel noise, and ranks follow the performances, so every
pair of players in a game is a Bradley-Terry comparison with exactly the given Elo difference. A
block is one deal played under every rotation of its table, as in a real tournament.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import itertools
import math

import numpy as np

from kdtourney.registry import code_digest
from kdtourney.store import Store

DEFAULT_RULES = {"variant": "standard", "three_player": "official", "harmony": False,
                 "middle_kingdom": False, "tiebreak": "crowns", "first_picks": "random"}
START = _dt.datetime(2025, 1, 6, 9, 0, tzinfo=_dt.UTC)


def identity(code: str) -> dict:
    """A python entrant's identity for a bot whose source text is `code`."""
    ident = {"kind": "python", "origin": "synthetic",
             "source_sha256": hashlib.sha256(code.encode()).hexdigest()}
    return dict(ident, digest=code_digest(ident))


def simulate(folder, elo: dict, *, blocks: int = 50, players: int = 2, seed: int = 0,
             start: _dt.datetime = START, minutes: float = 1.0, failed_blocks: int = 0,
             **store) -> list[dict]:
    """Draw a round-robin tournament of the entrants in `elo` ({label: true Elo}) and write it
    into `folder` (`write_store`, which takes the other keywords): `blocks` deals of
    `players`-player tables cycling through every composition, each deal under every seat
    rotation, games `minutes` apart from `start`; the last `failed_blocks` blocks' games fail.
    Returns the games (see `write_store`)."""
    rng = np.random.default_rng(seed)
    labels = list(elo)
    theta = {e: v * math.log(10) / 400 for e, v in elo.items()}
    tables = (list(itertools.combinations(labels, players)) if len(labels) >= players
              else [tuple(labels[s % len(labels)] for s in range(players))])
    games = []
    for block in range(blocks):
        table = tables[block % len(tables)]
        for rotation in range(players):
            seats = [table[(s + rotation) % players] for s in range(players)]
            finished = start + _dt.timedelta(minutes=minutes * len(games))
            ranks = None
            if block < blocks - failed_blocks:
                perf = np.array([theta[e] for e in seats]) + rng.gumbel(size=players)
                ranks = [int(r) for r in np.argsort(np.argsort(-perf)) + 1]
            games.append(dict(block=block, rotation=rotation, seats=seats, ranks=ranks,
                              finished=finished))
    write_store(folder, games, labels, players=players, seed=seed, start=start, **store)
    return games


def write_store(folder, games: list[dict], labels, *, players, seed: int = 0, start=START,
                code: dict | None = None, identities: dict | None = None,
                rules: dict | None = None, dynasty: bool = False,
                recorded_after: int | None = None, sprt: bool = False) -> None:
    """A store in `folder` holding `games` (dicts: block, rotation, seats (labels), ranks (None: a
    failed game), finished (a datetime)), numbered in list order.

    code: {label: source text} -> the entrants table (an identity per label; labels not given get
    their label as code); None writes a store from before identities were recorded, and with
    `recorded_after` the identities are recorded after that many games (as a resume of an old
    store does). identities: {label: identity} as a registry gives them, instead of `code`.
    sprt: mark the store as an SPRT's.
    """
    labels = list(labels)
    tournament = {"entrants": labels, "specs": labels, "format": "round-robin",
                  "players": list(players) if isinstance(players, (list, tuple)) else [players],
                  "games": len(games), "seed": seed,
                  "rules": dict(DEFAULT_RULES, **(rules or {})), "candidate": None, "lineup": None,
                  "dynasty": dynasty, "move_time_limit": None}
    meta = {"name": folder.name, "command": "simulated", "created": start.isoformat()}
    if code is not None and recorded_after is None:
        identities = {e: identity(code.get(e, e)) for e in labels}
    with Store.create(folder, tournament, meta, entrants=identities) as store:
        if sprt:
            store.set_config("sprt", {"candidate": labels[0], "baseline": labels[1]})
        for number, g in enumerate(games):
            spec = dict(game=number, block=g["block"], arrangement=g["rotation"],
                        deal_seeds=[g["block"]], n_players=len(g["seats"]), duration=0.1,
                        moves=[], finished_at=g["finished"].isoformat())
            if g["ranks"] is None:
                faults = [dict(seat=s, entrant=e, kind="failed", message="simulated")
                          for s, e in enumerate(g["seats"])]
                store.add_game(dict(spec, status="fault", error="simulated"), [], faults)
            else:
                store.add_game(dict(spec, status="ok"), _rows(number, g["seats"], g["ranks"]), [])
            if recorded_after is not None and number + 1 == recorded_after:
                store.record_entrants({e: identity((code or {}).get(e, e)) for e in labels})
                store.update_meta(entrants_recorded_after=recorded_after)


def _rows(game, seats, ranks):
    scores = [60 - 10 * r for r in ranks]
    return [dict(game=game, seat=s, entrant=e, score=scores[s], rank=ranks[s],
                 win_share=float(ranks[s] == 1),
                 margin=scores[s] - max(scores[:s] + scores[s + 1:]),
                 largest_territory=5, crowns=3, discards=0, fault=0, time_total=0.01,
                 time_max=0.001, decisions=20)
            for s, e in enumerate(seats)]


__all__ = ["simulate", "write_store", "identity", "DEFAULT_RULES", "START"]
