"""A stored game, move by move, as text (`kdtourney replay DIR GAME`)."""

from __future__ import annotations

import json
import sqlite3

from kdtourney.arena import store as _store
from kdtourney.arena.tournament import Tournament
from kdtourney.engine import Game


def replay_text(folder, game: int) -> str:
    """The game's header, every move (round, seat, entrant, the move described), then each final
    kingdom as text with its score; a dynasty shows its three deals. StoreError if the store or the
    game is missing, or its stored row cannot be replayed."""
    config = _store.load_config(folder)
    tournament = Tournament.from_dict(config["tournament"])
    path = _store.store_path(folder)
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        row = conn.execute("SELECT * FROM games WHERE game = ?", (game,)).fetchone()
        if row is None:
            total = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
            raise _store.StoreError(f"game {game} is not in {folder} ({total} games stored, "
                                    "numbered from 0)")
        results = {r["seat"]: dict(r) for r in
                   conn.execute("SELECT * FROM results WHERE game = ? ORDER BY seat", (game,))}
        faults = [dict(r) for r in
                  conn.execute("SELECT * FROM faults WHERE game = ? ORDER BY seat", (game,))]
    finally:
        conn.close()
    try:
        return _text(folder, game, tournament, row, results, faults)
    except (ValueError, TypeError, KeyError, IndexError) as exc:  # a row changed by hand
        raise _store.StoreError(f"game {game} of {folder} cannot be replayed from its stored row: "
                                f"{exc}") from None


def _text(folder, game, tournament, row, results, faults) -> str:
    n = row["n_players"]
    entrants = {s: r["entrant"] for s, r in results.items()}
    if len(entrants) < n:  # a failed game has no player rows: the schedule says who sat where
        spec = tournament.plan().games[game]
        entrants = {s: tournament.entrants[e] for s, e in enumerate(spec.seats)}
    rules = tournament.rules_for(n)
    seeds = json.loads(row["deal_seeds"])
    moves = json.loads(row["moves"])
    deals = [moves] if len(seeds) == 1 else moves
    out = [f"game {game} of {folder}: block {row['block']}, arrangement {row['arrangement']}, "
           f"{n} players, status {row['status']}",
           "seats: " + ", ".join(f"{s} {entrants.get(s, '?')}" for s in range(n))]
    for f in faults:
        who = f"seat {f['seat']} {f['entrant']}" if f["seat"] >= 0 else "unknown seat"
        out.append(f"fault: {who}: {f['kind']}: {f['message']}")
    for d, (seed, actions) in enumerate(zip(seeds, deals)):
        g = Game(rules, seed)
        out.append("")
        out.append(f"deal {d + 1} of {len(seeds)}, seed {seed}" if len(seeds) > 1 else f"deal seed {seed}")
        for action in actions:
            p = g.current_player
            out.append(f"round {g.round:2d}  seat {p} {entrants.get(p, '?')}: {g.describe(action)}")
            g.apply(action)
        if not actions:
            out.append("(no moves stored)")
            continue
        for p in range(n):
            s = g.score(p)
            out.append("")
            out.append(f"seat {p} {entrants.get(p, '?')}: {s.total} points (territories "
                       f"{s.territories}, bonus {s.bonus}, largest territory {s.largest_territory}, "
                       f"crowns {s.crowns}, discards {g.discards(p)})")
            out.append(g.kingdom(p).to_text())
    if results:
        out.append("")
        out.append("result: " + ", ".join(
            f"seat {s} {r['entrant']} rank {r['rank']} score {r['score']}"
            + (" (forfeit)" if r["fault"] else "") for s, r in sorted(results.items())))
    return "\n".join(out)


__all__ = ["replay_text"]
