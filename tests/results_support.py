"""Results tables written by hand for the statistics tests."""

import pandas as pd


def results_table(games) -> pd.DataFrame:
    """The results table (game, block, n_players, seat, entrant, rank) of
    [(block, [(entrant, rank) per seat]) per game]."""
    out = []
    for g, (block, players) in enumerate(games):
        for seat, (e, r) in enumerate(players):
            out.append((g, block, len(players), seat, e, r))
    return pd.DataFrame(out, columns=["game", "block", "n_players", "seat", "entrant", "rank"])
