"""A stored game as the engine replays it, for what its rows do not say: the pages, `replay` and
`export` name a fault's call with this one piece of code.

    stored_deals(row)                  [(deal seed, actions)] of a stored game row
    rules_for(rules, n_players)        the Rules of a stored tournament's table
    fault_calls(row, rules, faults)    where each fault fell (one entry a fault, None where
                                       unknown): the call, named as the bot counts it
                                       ('construction', 'setup', 'act 3'), and the first move
                                       played for it
"""

from __future__ import annotations

import dataclasses
import json

from kdtourney.engine import Game, Rules


def rules_for(rules: dict, n_players: int) -> Rules:
    """The Rules of a stored tournament's `rules` dict for a table of `n_players`."""
    fields = {f.name for f in dataclasses.fields(Rules)}
    return Rules(**{k: v for k, v in dict(rules, players=int(n_players)).items() if k in fields})


def stored_deals(row) -> list:
    """[(deal seed, actions)] of a stored game row (a mapping with `moves`, `deal_seeds`, `seed`):
    one deal, or a dynasty's three. ValueError where they do not go together."""
    moves = json.loads(row["moves"]) if isinstance(row["moves"], str) else row["moves"]
    seeds = row["deal_seeds"] if "deal_seeds" in row else None
    seeds = json.loads(seeds) if isinstance(seeds, str) else seeds
    if not seeds:
        seeds = [int(row["seed"])]
    deals = moves if moves and isinstance(moves[0], list) else [moves]
    if len(seeds) > 1 and moves == []:  # a failed dynasty stored no deal at all
        deals = [[] for _ in seeds]
    if len(seeds) != len(deals):
        raise ValueError(f"{len(deals)} move lists for {len(seeds)} deal seeds")
    return [(int(s), [int(a) for a in d]) for s, d in zip(seeds, deals)]


def fault_calls(row, rules: Rules, faults) -> list:
    """Where each fault of the stored game `row` fell (`faults`: mappings with seat, call, kind,
    message; `call` the store's count of the harness's calls into the bot, 0 its construction).
    One entry per fault, in order: None where its seat or call is unknown, else (seat, the call
    named as the bot counts its calls: 'construction', 'setup' ('setup of deal 2' in a dynasty)
    or 'act N', N from 1, (deal, move): the first move of the seat's that the harness played for
    it, the first legal one (None if it had no move left)). Every later move of that seat is the
    harness's too."""
    deals = stored_deals(row)
    out: list[tuple[int, str, tuple[int, int] | None] | None] = []
    for f in faults:
        seat, call = f.get("seat"), f.get("call")
        if seat is None or call is None or call != call or int(seat) < 0:  # NaN: unknown
            out.append(None)
            continue
        seat, call = int(seat), int(call)
        count, acts, first = 0, 0, None
        named = "construction" if call == 0 else None
        for d, (seed, actions) in enumerate(deals):
            if named is None:
                count += 1
                if count == call:
                    named = "setup" + (f" of deal {d + 1}" if len(deals) > 1 else "")
            game = Game(rules, seed)
            for i, action in enumerate(actions):
                if game.current_player == seat:
                    if named is None:
                        count, acts = count + 1, acts + 1
                        named = f"act {acts}" if count == call else None
                    if named is not None and first is None:
                        first = (d, i)
                game.apply(action)
        out.append((seat, named or f"call {call}", first))
    return out


__all__ = ["stored_deals", "rules_for", "fault_calls"]
