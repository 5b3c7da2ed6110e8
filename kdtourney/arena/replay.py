"""A stored game, move by move, as text (`kdtourney replay DIR GAME`)."""

from __future__ import annotations

import json
import sqlite3

from kdtourney.arena import schedule
from kdtourney.arena import store as _store
from kdtourney.arena.tournament import Tournament
from kdtourney.engine import Game


def replay_text(folder, game: int) -> str:
    """The game's header, every move (round, seat, entrant, the move described), then each final
    kingdom as text with its score; a dynasty shows its three deals. Who sat where, with the
    specs they played (a tune's theta+ values, a ladder's version), comes from the game's block.
    StoreError if the store or the game is missing, or its stored row cannot be replayed."""
    config = _store.load_config(folder)
    tournament = Tournament.from_dict(config["tournament"])
    blocks = _store.load_blocks(folder).set_index("block")
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
        block = blocks.loc[row["block"]] if row["block"] in blocks.index else None
        return _text(folder, game, tournament, block, row, results, faults)
    except (ValueError, TypeError, KeyError, IndexError) as exc:  # a row changed by hand
        raise _store.StoreError(f"game {game} of {folder} cannot be replayed from its stored row: "
                                f"{exc}") from None


def _text(folder, game, tournament, block, row, results, faults) -> str:
    n = row["n_players"]
    entrants = {s: r["entrant"] for s, r in results.items()}
    if len(entrants) < n and block is not None:  # a failed game has no player rows: its block
        entrants = dict(enumerate(schedule.rotations(tuple(block["seats"]))[row["arrangement"]]))
    specs = {} if block is None else block["entrants"]

    def who(seat):  # the label, and the spec it played with when the label does not say it
        label = entrants.get(seat, "?")
        spec = specs.get(label)
        return label if spec in (None, label) else f"{label} ({spec})"

    rules = tournament.rules_for(n)
    seeds = json.loads(row["deal_seeds"])
    moves = json.loads(row["moves"])
    deals = [moves] if len(seeds) == 1 else moves
    out = [f"game {game} of {folder}: block {row['block']}, arrangement {row['arrangement']}, "
           f"{n} players, status {row['status']}",
           "seats: " + ", ".join(f"{s} {who(s)}" for s in range(n))]
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
