"""A stored game, move by move, as text (`kdtourney replay DIR GAME`): the whole game with its final
kingdoms (`replay_text`), or the position after each move, to step through (`positions`). Seats
are numbered from 1, as the report numbers them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import cast

from kdtourney.engine import Game, Rules
from kdtourney.engine.tiles import CASTLE, EMPTY, TERRAIN_LETTERS, TILES
from kdtourney.store import StoreError, reader
from kdtourney.store.deals import fault_calls
from kdtourney.tournament import schedule
from kdtourney.tournament.definition import Tournament


@dataclass
class _Stored:
    """What the store holds of one game: its row, results and faults, who sat where (labels, and
    labels with the spec each played where the label does not say it), its rules and deals."""

    folder: object
    game: int
    row: dict
    results: dict
    faults: list
    labels: dict
    names: dict
    rules: Rules
    deals: list  # [(seed, actions)]
    # {seat: ((deal, move), call)}: from that move on, kdtourney played it
    harness: dict = field(default_factory=dict)
    notes: dict | None = None  # {(deal, move): the note its bot attached to it}

    def __post_init__(self):
        self.harness = {}
        faults = [f for f in self.faults if f["kind"] != "failed"]
        for placed in fault_calls(self.row, self.rules, faults):
            if placed is not None:
                seat, call, first = placed
                self.harness[seat] = (first, call)

    def mark(self, seat: int, deal: int, move: int) -> str:
        """' [played by kdtourney ...]' for a move the harness played for `seat` after its fault;
        the bot's note on its move, if it sent one."""
        first, call = self.harness.get(seat, (None, None))
        note = (self.notes or {}).get((deal, move))
        if first is None or (deal, move) < first:
            return f"  -- note: {note}" if note else ""
        return f"  [played by kdtourney, the first legal move: its bot faulted at its {call}]"


def _load(folder, game: int) -> _Stored:
    """StoreError if the store or the game is missing, or its stored row cannot be read."""
    with reader(folder) as st:
        tournament = Tournament.from_dict(st.config()["tournament"])
        blocks = st.blocks().set_index("block")
        stored = st.game(game)
        if stored is None:
            raise StoreError(f"game {game} is not in {folder} ({st.count_games()} games stored, "
                             "numbered from 0)")
        notes = st.notes().query("game == @game")
    row = stored.row
    results = {x["seat"]: x for x in stored.results}
    faults = stored.faults
    try:
        block = blocks.loc[row["block"]] if row["block"] in blocks.index else None
        n = row["n_players"]
        labels = {s: r["entrant"] for s, r in results.items()}
        if len(labels) < n and block is not None:  # a failed game has no player rows: its block
            labels = dict(enumerate(schedule.rotations(tuple(block["seats"]))[row["arrangement"]]))
        specs = {} if block is None else block["entrants"]
        names = {}
        for seat in range(n):  # the spec it played with where the label does not say it
            label = labels.get(seat, "?")
            spec = specs.get(label)
            names[seat] = label if spec in (None, label) else f"{label} ({spec})"
        seeds = json.loads(row["deal_seeds"])
        moves = json.loads(row["moves"])
        deals = list(zip(seeds, [moves] if len(seeds) == 1 else moves))
        noted = {(int(d), int(m)): str(t) for d, m, t in zip(notes["deal"], notes["move"],
                                                           notes["note"])}
        return _Stored(folder, game, dict(row), results, faults, labels, names,
                       tournament.rules_for(n), deals, notes=noted)
    except (ValueError, TypeError, KeyError, IndexError) as exc:  # a row changed by hand
        raise _replay_error(folder, game, exc) from None


def _replay_error(folder, game, exc) -> StoreError:
    return StoreError(f"game {game} of {folder} cannot be replayed from its stored row: {exc}")


def _header(s: _Stored) -> list[str]:
    row, n = s.row, s.row["n_players"]
    out = [f"game {s.game} of {s.folder}: block {row['block']}, arrangement {row['arrangement']}, "
           f"{n} players, status {row['status']}",
           "seats: " + ", ".join(f"{seat + 1} {s.names[seat]}" for seat in range(n))]
    for f in s.faults:
        who = f"seat {f['seat'] + 1} {f['entrant']}" if f["seat"] >= 0 else "unknown seat"
        at = f" at its {s.harness[f['seat']][1]}" if f["seat"] in s.harness else ""
        out.append(f"fault: {who}: {f['kind']}{at}: {f['message']}")
    return out


def _result(s: _Stored) -> str:
    return "result: " + ", ".join(
        f"seat {seat + 1} {r['entrant']} rank {r['rank']} score {r['score']}"
        + (" (forfeit)" if r["fault"] else "") for seat, r in sorted(s.results.items()))


def replay_text(folder, game: int) -> str:
    """The game's header, every move (round, seat, entrant, the move described), then each final
    kingdom as text with its score; a dynasty shows its three deals. Who sat where, with the
    specs they played (a tune's theta+ values, a ladder's version), comes from the game's block.
    StoreError if the store or the game is missing, or its stored row cannot be replayed."""
    s = _load(folder, game)
    n = s.rules.players
    out = _header(s)
    try:
        for d, (seed, actions) in enumerate(s.deals):
            g = Game(s.rules, seed)
            out.append("")
            out.append(f"deal {d + 1} of {len(s.deals)}, seed {seed}" if len(s.deals) > 1
                       else f"deal seed {seed}")
            for i, action in enumerate(actions):
                # None past the game's end (a row changed by hand): p + 1 raises, reported below
                p = cast(int, g.current_player)
                out.append(f"round {g.round:2d}  seat {p + 1} {s.labels.get(p, '?')}: "
                           f"{g.describe(action)}{s.mark(p, d, i)}")
                g.apply(action)
            if not actions:
                out.append("(no moves stored)")
                continue
            for p in range(n):
                score = g.score(p)
                out.append("")
                out.append(f"seat {p + 1} {s.labels.get(p, '?')}: {score.total} points "
                           f"(territories {score.territories}, bonus {score.bonus}, largest "
                           f"territory {score.largest_territory}, crowns {score.crowns}, "
                           f"discards {g.discards(p)})")
                out.append(g.kingdom(p).to_text())
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise _replay_error(folder, game, exc) from None
    if s.results:
        out.extend(["", _result(s)])
    return "\n".join(out)


def positions(folder, game: int) -> list[str]:
    """The game as positions to step through, as text: the start of each deal, then the position
    after each move (what was played, both rows with who claimed and placed what, every kingdom
    in its size x size frame with its score now), each headed `move K of N`; the last one ends
    with the result. StoreError as `replay_text`."""
    s = _load(folder, game)
    steps = []
    try:
        for d, (seed, actions) in enumerate(s.deals):
            g = Game(s.rules, seed)
            deal = f", deal {d + 1} of {len(s.deals)}" if len(s.deals) > 1 else ""
            order = ", ".join(f"seat {p + 1}" for p in g.first_order)
            steps.append((d, deal, f"start: kings claim the first row in the order {order}",
                          g.copy()))
            for i, action in enumerate(actions):
                # None past the game's end (a row changed by hand): p + 1 raises, reported below
                p = cast(int, g.current_player)
                what = (f"round {g.round}, seat {p + 1} {s.labels.get(p, '?')}: "
                        f"{g.describe(action)}{s.mark(p, d, i)}")
                g.apply(action)
                steps.append((d, deal, what, g.copy()))
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise _replay_error(folder, game, exc) from None
    header = _header(s)
    ends = {d: g for d, _, _, g in steps}  # the end of each deal
    out = []
    for k, (d, deal, what, g) in enumerate(steps):
        lines = [*header, "", f"move {k} of {len(steps) - 1}{deal}: {what}",
                 *_position(g, ends[d], s)]
        if k == len(steps) - 1 and s.results:
            lines.extend(["", _result(s)])
        out.append("\n".join(lines))
    return out


def _position(g: Game, end: Game, s: _Stored) -> list[str]:
    """Both rows and every kingdom, side by side, each in a size x size frame from the top left
    of its kingdom at the `end` of the deal (a frame that does not move from one position to the
    next)."""
    def row(dominoes, placed=None):
        return ", ".join(f"{TILES[d]} " + (f"seat {o + 1}" if o >= 0 else "free")
                         + (" placed" if placed and placed[j] else "")
                         for j, (d, o) in enumerate(dominoes)) or "none"

    lines = ["", f"placing: {row(g.current_row, g.placed)}", f"to claim: {row(g.new_row)}", ""]
    size, width = s.rules.size, 3 * s.rules.size + 2
    scores = g.scores()
    boards = [[f"seat {p + 1} {s.labels.get(p, '?')}"[:width - 1], f"{scores[p]} points"]
              + _frame(g.kingdom(p), end.kingdom(p), size) for p in range(s.rules.players)]
    lines += ["".join(b[i].ljust(width) for b in boards).rstrip() for i in range(len(boards[0]))]
    return lines


def _frame(kingdom, end, size: int) -> list[str]:
    """The kingdom's squares in the size x size frame from the top left of the kingdom `end`."""
    top, _, left, _ = end.bounds()
    lines = []
    for r in range(top, top + size):
        cells = []
        for c in range(left, left + size):
            terrain, crowns = kingdom.square(r, c)
            cells.append(" ." if terrain == EMPTY else " C" if terrain == CASTLE
                         else f"{TERRAIN_LETTERS[terrain]}{crowns}")
        lines.append(" ".join(cells))
    return lines


__all__ = ["replay_text", "positions"]
