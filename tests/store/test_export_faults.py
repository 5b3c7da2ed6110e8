"""The faults export names each call at fault as the bot counts its calls and as the report and
`replay` name it (`bot_call`: 'construction', 'setup', 'act 3', 'setup of deal 2'), beside the
store's count of kdtourney's calls (`call`, 0 the construction)."""

import pandas as pd

from kdtourney import store
from kdtourney.engine import Game, Rules
from kdtourney.store import Store

TOURNAMENT = {"entrants": ["a", "b"], "seed": 3, "games": 4}


def played(seed):
    """A whole 2-player deal, the first legal action at every move."""
    game = Game(Rules(players=2), seed)
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    return list(game.history)


def acts_of(seat, seed, actions):
    """How many times `seat` acts in the deal `seed` played as `actions`."""
    game, count = Game(Rules(players=2), seed), 0
    for action in actions:
        count += game.current_player == seat
        game.apply(action)
    return count


def add(st, game, seeds, faults):
    deals = [played(s) for s in seeds]
    st.add_game(dict(game=game, block=game // 2, arrangement=game % 2, n_players=2,
                     deal_seeds=seeds, status="fault", duration=0.1,
                     moves=deals if len(seeds) > 1 else deals[0], error="x"), [], faults)
    return deals


def test_the_faults_export_names_each_call_as_the_replay_does(tmp_path):
    with Store.create(tmp_path, TOURNAMENT, {}) as st:
        add(st, 0, [11], [dict(seat=0, entrant="a", kind="illegal", message="99999", call=4),
                          dict(seat=1, entrant="b", kind="crash", message="exit 1", call=0)])
        add(st, 1, [12], [dict(seat=1, entrant="b", kind="timeout", message="t", call=None)])
        # a dynasty: construction 0, setup 1, its acts of the first deal, then its second setup
        second_setup = 2 + acts_of(0, 15, played(15))
        add(st, 2, [15, 16, 17], [dict(seat=0, entrant="a", kind="crash", message="m",
                                       call=second_setup),
                                  dict(seat=1, entrant="b", kind="illegal", message="m", call=1)])
        st.add_game(dict(game=3, block=1, arrangement=1, n_players=2, deal_seeds=[18],
                         status="fault", duration=0.0, moves=[], error="failed"), [],
                    [dict(seat=s, entrant="ab"[s], kind="failed", message="worker died",
                          call=None) for s in (0, 1)])
    assert store.export_table(tmp_path, tmp_path / "f.csv", table="faults") == 7
    csv = pd.read_csv(tmp_path / "f.csv")
    assert list(csv.columns) == ["game", "seat", "entrant", "kind", "message", "call", "bot_call",
                                 "stderr"]
    named = {(g, s): (None if pd.isna(c) else c)
             for g, s, c in zip(csv["game"], csv["seat"], csv["bot_call"])}
    assert named == {(0, 0): "act 3", (0, 1): "construction", (1, 1): None,
                     (2, 0): "setup of deal 2", (2, 1): "setup of deal 1", (3, 0): None,
                     (3, 1): None}
    assert csv["call"].tolist()[:2] == [4, 0]  # the store's count stays beside it


def test_a_faults_row_that_cannot_be_replayed_leaves_its_call_unnamed(tmp_path):
    with Store.create(tmp_path, TOURNAMENT, {}) as st:
        st.add_game(dict(game=0, block=0, arrangement=0, n_players=2, deal_seeds=[11],
                         status="fault", duration=0.1, moves=[1001, 5, 676], error="x"), [],
                    [dict(seat=0, entrant="a", kind="illegal", message="9999", call=3)])
    store.export_table(tmp_path, tmp_path / "f.csv", table="faults")
    csv = pd.read_csv(tmp_path / "f.csv")
    assert csv["call"].tolist() == [3] and csv["bot_call"].isna().all()
