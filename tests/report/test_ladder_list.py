"""The list of a ladder over several table sizes: its page and `kdtourney ratings DIR` rate every
size it plays, as its matchmaker does (kdtourney.report.ladder, kdtourney.report.pool)."""

from __future__ import annotations

import datetime
import itertools
import math

import numpy as np
from click.testing import CliRunner
from pool_support import START, write_store

from kdtourney import store
from kdtourney.cli import main
from kdtourney.report.ladder import ladder_board
from kdtourney.report.pool import rating_list

ELO = {"a": 200.0, "b": 0.0, "c": -100.0, "d": -200.0}


def mixed_games(sizes_per_block, seed=0):
    """Blocks of the given table sizes, each under every rotation, Plackett-Luce ranks."""
    rng = np.random.default_rng(seed)
    theta = {e: v * math.log(10) / 400 for e, v in ELO.items()}
    tables = {n: list(itertools.combinations(ELO, n)) for n in (2, 4)}
    games = []
    for block, n in enumerate(sizes_per_block):
        table = tables[n][block % len(tables[n])]
        perf_noise = rng.gumbel(size=n)
        for rotation in range(n):
            seats = [table[(s + rotation) % n] for s in range(n)]
            perf = np.array([theta[e] for e in seats]) + np.roll(perf_noise, rotation)
            ranks = [int(r) for r in np.argsort(np.argsort(-perf)) + 1]
            games.append(dict(block=block, rotation=rotation, seats=seats, ranks=ranks,
                              finished=START + datetime.timedelta(minutes=len(games))))
    return games


def write_ladder(folder, games, players=(2, 4)):
    write_store(folder, games, list(ELO), players=list(players))
    rows = [dict(label=e, spec=e, version=1, digest=None, origin="--bots", status="active",
                 added="t0", changed="t0", note="entered") for e in ELO]
    with store.open_store(folder) as st:
        st.set_config("ladder", dict(players=list(players), seed=0, rules={}, dynasty=False,
                                     move_time_limit=None, clock=None, rule=2))
        st.write_ladder(entrants=rows)


def test_a_ladder_of_two_table_sizes_rates_both_on_its_list_and_in_ratings(tmp_path):
    # more 2-player games than 4-player ones: a list of the most played size would drop the 4s
    games = mixed_games([2, 2, 4] * 20)
    folder = tmp_path / "ladder"
    write_ladder(folder, games)
    found = rating_list([folder], n_boot=200)
    assert found.players == (2, 4)
    assert found.sources[0].pooled == found.sources[0].stored == len(games) and not found.skipped
    board = ladder_board(folder, n_boot=200)
    assert board.found.players == (2, 4)
    listed = {e.label: (e.elo, e.games) for e in found.entrants}
    assert {r["name"]: (r["elo"], r["games"]) for r in board.rows} == listed
    seated = {e: sum(e in g["seats"] for g in games) for e in ELO}
    assert {e: n for e, (_, n) in listed.items()} == seated
    # the command line prints that list
    result = CliRunner().invoke(main, ["ratings", str(folder), "--out", str(tmp_path / "list")])
    assert result.exit_code == 0 and "2/4-player games" in result.output, result.output


def test_a_tournament_of_two_sizes_still_lists_its_most_played_size_by_default(tmp_path):
    folder = tmp_path / "run"
    write_store(folder, mixed_games([2, 2, 4] * 20), list(ELO), players=[2, 4])
    found = rating_list([folder], n_boot=0)
    assert found.players == (2,)
    assert rating_list([folder], players=(2, 4), n_boot=0).players == (2, 4)


def test_the_live_page_reads_one_state_of_the_store_while_games_are_stored(tmp_path, monkeypatch):
    """A game stored between the page's reads of the results and of the games (the ladder
    stores games while its page is built) was listed without its results: `failed`."""
    from kdtourney.report.ladder import build_context

    games = mixed_games([2] * 6)
    folder = tmp_path / "ladder"
    write_ladder(folder, games, players=(2,))
    board = ladder_board(folder, n_boot=0)
    read_results = store.load_results

    def results_then_a_game_stored(*args, **kwargs):
        out = read_results(*args, **kwargs)
        with store.open_store(folder) as st:  # the ladder's process, as the page reads
            number = len(games)
            st.add_game(dict(game=number, block=6, arrangement=0, deal_seeds=[6], n_players=2,
                             duration=0.1, moves=[], status="ok"),
                        [dict(game=number, seat=s, entrant=e, score=50 - 10 * s, rank=s + 1,
                              win_share=float(s == 0), margin=10 - 20 * s, largest_territory=5,
                              crowns=3, discards=0, fault=0, time_total=0.01, time_max=0.001,
                              decisions=20) for s, e in enumerate("ab")], [])
        return out

    monkeypatch.setattr(store, "load_results", results_then_a_game_stored)
    ctx = build_context(folder, board, running=True)
    assert ctx["last_games"] and [g for g in ctx["last_games"] if not g["players"]] == []
    assert ctx["n_games"] == len(games)  # the state read: the game stored meanwhile comes next
    monkeypatch.setattr(store, "load_results", read_results)
    assert build_context(folder, board, running=True)["n_games"] == len(games) + 1
