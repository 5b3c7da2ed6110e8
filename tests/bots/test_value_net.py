"""The learned evaluation: the features the network sees, its forward pass in the kernels against
the training library's and against committed reference outputs, training end to end, and the bots
that use it (mcts eval=net|mix, value-greedy, a bots-folder subclass with its own weights).

The reference file (tests/data/value_net_reference.npz) holds positions (a seed and the actions
that reach them), their features, and what PyTorch computed on those features with the shipped
networks; regenerate it after retraining with `python tests/bots/test_value_net.py`.
"""

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from kdtourney.bots import net_kernels as NK
from kdtourney.bots import valuenet
from kdtourney.bots.greedy import GreedyBot
from kdtourney.bots.mcts import MCTSBot
from kdtourney.bots.value_greedy import ValueGreedyBot
from kdtourney.engine import Game, Rules
from kdtourney.engine import kernels as K
from kdtourney.registry import BotRegistry, EntrantError, builtin_files
from kdtourney.testing import check_bot

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "tests" / "data" / "value_net_reference.npz"
EXAMPLE = ROOT / "examples" / "learned"
TORCH = "the learn extra is not installed (pip install 'kdtourney[learn]')"
RULES = {4: Rules(players=4, harmony=True, middle_kingdom=True),
         2: Rules(players=2, harmony=True, middle_kingdom=True)}


def positions(rules, seed, every=7):
    """(actions so far, game) at every `every`-th decision of a game of random legal moves."""
    game = Game(rules, seed)
    rng = np.random.default_rng(seed)
    k = 0
    while not game.is_over:
        if k % every == 0:
            yield list(game.history), game.copy()
        legal = game.legal_actions()
        game.apply(legal[int(rng.integers(len(legal)))])
        k += 1


def features(game, viewer):
    fb = NK.feature_buffers(game.n_players)
    NK.observe(*game.arrays, viewer, fb)
    return fb[0].copy()


def torch_forward(arrays, x):
    import torch

    w1, b1, w2, b2, w3, b3 = (torch.from_numpy(np.asarray(a, dtype=np.float64)) for a in arrays)
    h = torch.relu(torch.from_numpy(np.asarray(x, dtype=np.float64)) @ w1.T + b1)
    h = torch.relu(h @ w2.T + b2)
    return (h @ w3.T + b3).numpy()


def numba_forward(arrays, x):
    w1, _, w2, _, w3, _ = arrays
    out = np.zeros((len(x), w3.shape[0]), dtype=np.float32)
    h1, h2 = np.zeros(w1.shape[0], np.float32), np.zeros(w2.shape[0], np.float32)
    for i, row in enumerate(np.asarray(x, dtype=np.float32)):
        NK.forward(arrays, row, h1, h2, out[i])
    return out


# --- features ---------------------------------------------------------------------------------

def test_features_never_read_the_order_of_the_undrawn_deck():
    rules = RULES[4]
    rng = np.random.default_rng(5)
    for _, game in positions(rules, 31, every=3):
        bits, bbox, st = game.arrays
        other = game.copy()
        ost = other.arrays[2]
        pos, end = int(st[K.ST_DECK_POS]), int(st[K.ST_DECK_LEN])
        ost[K.ST_DECK + pos:K.ST_DECK + end] = rng.permutation(st[K.ST_DECK + pos:K.ST_DECK + end])
        for viewer in range(4):
            np.testing.assert_array_equal(features(game, viewer), features(other, viewer))


def test_features_show_the_table_as_the_viewer_sees_it():
    rules = RULES[4]
    per = NK.FEATURES_PER_PLAYER
    for _, game in positions(rules, 32, every=5):
        scores = game.scores()
        for viewer in range(4):
            x = features(game, viewer)
            others = sorted((p for p in range(4) if p != viewer),
                            key=lambda p: (-scores[p], (p - viewer) % 4))
            assert ([x[k * per + NK.P_SCORE] for k in range(4)]
                    == [scores[p] for p in [viewer, *others]])
            table = 4 * per
            assert x[table + NK.T_UNSEEN] == len(game.unseen())
            assert x[table + NK.T_TO_ACT] == (game.current_player == viewer)
            held_new = sum(1 for _, owner in game.new_row if owner == viewer)
            assert x[NK.P_HELD_NEW] == held_new
            assert x[NK.P_LAND] == len(game.square_array(viewer)) - 1  # its squares but the castle


# --- the forward pass -------------------------------------------------------------------------

def test_the_kernels_forward_pass_equals_the_committed_reference():
    """What CI checks without the training library: the committed positions give the committed
    features, and the shipped networks give on them what PyTorch gave."""
    with np.load(REFERENCE) as ref:
        for players in (4, 2):
            rules = RULES[players]
            net = valuenet.network_for(valuenet.SHIPPED, rules)
            seeds, lengths, actions = (ref[f"seeds{players}"], ref[f"lengths{players}"],
                                       ref[f"actions{players}"])
            viewers, want_x, want_y = (ref[f"viewers{players}"], ref[f"features{players}"],
                                       ref[f"outputs{players}"])
            starts = np.concatenate([[0], np.cumsum(lengths)])
            for i, seed in enumerate(seeds):
                game = Game.replay(rules, int(seed), actions[starts[i]:starts[i + 1]].tolist())
                np.testing.assert_array_equal(features(game, int(viewers[i])), want_x[i])
            np.testing.assert_allclose(numba_forward(net.arrays, want_x), want_y, rtol=1e-4,
                                       atol=1e-3)


def test_the_committed_reference_outputs_are_pytorchs():
    pytest.importorskip("torch", reason=TORCH)
    with np.load(REFERENCE) as ref:
        for players in (4, 2):
            net = valuenet.network_for(valuenet.SHIPPED, RULES[players])
            np.testing.assert_allclose(torch_forward(net.arrays, ref[f"features{players}"]),
                                       ref[f"outputs{players}"], rtol=1e-4, atol=1e-3)


def test_the_kernels_forward_pass_equals_pytorchs_on_random_inputs():
    pytest.importorskip("torch", reason=TORCH)
    rng = np.random.default_rng(3)
    for hidden, width in (((8, 4), 5), ((64, 32), NK.n_features(4))):
        arrays = (rng.normal(size=(hidden[0], width)), rng.normal(size=hidden[0]),
                  rng.normal(size=(hidden[1], hidden[0])), rng.normal(size=hidden[1]),
                  rng.normal(size=(2, hidden[1])), rng.normal(size=2))
        arrays = tuple(a.astype(np.float32) for a in arrays)
        x = rng.normal(size=(50, width)).astype(np.float32) * 3
        np.testing.assert_allclose(numba_forward(arrays, x), torch_forward(arrays, x), rtol=1e-4,
                                   atol=1e-3)


# --- training ---------------------------------------------------------------------------------

@pytest.mark.timeout(900)  # trains twice with PyTorch
def test_training_on_a_tiny_set_runs_end_to_end_and_repeats_itself(tmp_path):
    pytest.importorskip("torch", reason=TORCH)
    outs = []
    for k in range(2):
        out = tmp_path / f"v{k}.npz"
        done = subprocess.run([sys.executable, str(EXAMPLE / "train.py"), "--playout-games", "3",
                               "--samples", "6", "--playouts", "2", "--epochs", "2", "--workers",
                               str(1 + k), "--seed", "4", "--out", str(out)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        assert "epoch 2/2" in done.stdout and f"saved to {out}" in done.stdout
        outs.append(valuenet.ValueNet.load(out))
    for a, b in zip(outs[0].arrays, outs[1].arrays):  # 1 or 2 workers: the same games, the same net
        np.testing.assert_array_equal(a, b)
    assert outs[0].rules == valuenet.rules_key(RULES[4])


@pytest.mark.process
def test_the_training_script_without_pytorch_says_what_to_install(tmp_path):
    script = tmp_path / "hide_torch.py"
    script.write_text("import sys, runpy\nsys.modules['torch'] = None\n"
                      f"sys.argv = [{str(EXAMPLE / 'train.py')!r}, '--playout-games', '1', "
                      "'--out', 'x.npz']\n"
                      f"runpy.run_path({str(EXAMPLE / 'train.py')!r}, run_name='__main__')\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode != 0 and ("Error: training needs PyTorch: "
                                     "pip install 'kdtourney[learn]'" in done.stderr)


# --- the bots ---------------------------------------------------------------------------------

class NetMCTS(MCTSBot):
    name = "net-mcts"

    def __init__(self, iterations=40, eval="net"):
        super().__init__(iterations=iterations, eval=eval)


class MixMCTS(NetMCTS):
    name = "mix-mcts"

    def __init__(self, iterations=40, eval="mix"):
        super().__init__(iterations=iterations, eval=eval)


SHIPPED_RULES = [(valuenet.describe_rules(rules), rules) for rules in RULES.values()]


@pytest.mark.slow
@pytest.mark.parametrize("bot", [NetMCTS, MixMCTS, ValueGreedyBot])
def test_the_bots_with_the_shipped_networks_pass_check_bot(bot):
    check_bot(bot, strict=True, settings=SHIPPED_RULES)  # the rules the shipped networks are for
    with warnings.catch_warnings():  # check_bot's rules have no bonuses: no network, a warning
        warnings.simplefilter("ignore")
        check_bot(bot, strict=True)


def test_the_shipped_networks_are_package_data():
    """What a non-editable install copies: pyproject's package data of kdtourney.bots names every
    shipped weights file, and no test data."""
    import tomllib

    with open(ROOT / "pyproject.toml", "rb") as f:
        globs = tomllib.load(f)["tool"]["setuptools"]["package-data"]["kdtourney.bots"]
    package = ROOT / "kdtourney" / "bots"
    declared = {p for g in globs for p in package.glob(g)}
    assert set(valuenet.SHIPPED) == declared
    assert ({valuenet.rules_key(rules) for rules in RULES.values()}
            <= set(valuenet.networks(valuenet.SHIPPED)))


def test_under_rules_without_a_network_mcts_plays_as_with_playouts_and_says_so():
    rules = Rules(players=2, variant="duel")
    assert valuenet.network_for(valuenet.SHIPPED, rules) is None
    moves = []
    for bot in (MCTSBot(iterations=60), NetMCTS(iterations=60)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            bot.setup(0, rules, 9)
        assert [str(w.message) for w in caught] == (
            [] if bot.eval == 0 else ["net-mcts: no value network for 2 players, duel, no bonuses; "
                                      "it evaluates with playouts"])
        game = Game(rules, 4)
        played = []
        while not game.is_over and len(played) < 12:
            action = (bot.act(game.view(game.current_player)) if game.current_player == 0
                      else game.legal_actions()[0])
            played.append(action)
            game.apply(action)
        moves.append(played)
    assert moves[0] == moves[1]


def test_under_rules_without_a_network_value_greedy_plays_as_greedy_and_says_so():
    rules = Rules(players=2, variant="duel")
    bot, greedy = ValueGreedyBot(), GreedyBot()
    with pytest.warns(UserWarning, match="value-greedy: no value network for 2 players, duel, "
                                         "no bonuses; it plays as greedy"):
        bot.setup(0, rules, 3)
    greedy.setup(0, rules, 3)
    game = Game(rules, 5)
    while not game.is_over:
        view = game.view(game.current_player)
        action = bot.act(view)
        assert action == greedy.act(view)
        game.apply(action)


def test_the_network_changes_what_mcts_plays():
    rules = RULES[4]
    game = next(g for k, (_, g) in enumerate(positions(rules, 40, every=9))
                if k >= 3 and len(g.legal_actions()) > 5)  # a decision mcts searches
    view = game.view(game.current_player)
    chosen = set()
    for spec in ("playout", "net", "mix"):
        bot = MCTSBot(iterations=400, eval=spec)
        bot.setup(game.current_player, rules, 2)
        bot.act(view)
        chosen.add(tuple(bot._tf[:bot._ncount[0], 0].round(6)))  # the tree's values
    assert len(chosen) == 3


def test_bad_parameters_and_weights_are_one_clear_error(tmp_path):
    with pytest.raises(ValueError, match="eval=net needs measure ratio or margin"):
        MCTSBot(eval="net", measure="wdl")
    with pytest.raises(ValueError, match="net_share must be a number from 0 to 1"):
        MCTSBot(eval="mix", net_share=1.5)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=f"{bad}: not a value network's weights file"):
        valuenet.ValueNet.load(bad)
    net = valuenet.network_for(valuenet.SHIPPED, RULES[4])
    narrow = tmp_path / "narrow.npz"
    valuenet.ValueNet((net.arrays[0][:, :10], *net.arrays[1:]), net.meta).save(narrow)
    with pytest.raises(ValueError, match="takes 10 features"):
        valuenet.ValueNet.load(narrow)
    twice = tmp_path / "twice.npz"
    shutil.copy(net.origin, twice)
    with pytest.raises(ValueError,
                       match="are both networks for 4 players, Harmony and Middle Kingdom"):
        valuenet.networks([net.origin, twice])


# --- weights are data of a bot ----------------------------------------------------------------

def test_a_bots_folder_network_is_its_identity(tmp_path):
    folder = tmp_path / "bots"
    shutil.copytree(EXAMPLE / "bots", folder)
    before = BotRegistry([folder], env=False, cwd=False, entry_points=False).identity("my-mcts")
    assert "my_value.npz" in before["files"]
    net = valuenet.ValueNet.load(folder / "my_value.npz")
    w1 = net.arrays[0].copy()
    w1[0, 0] += 1.0
    valuenet.ValueNet((w1, *net.arrays[1:]), net.meta).save(folder / "my_value.npz")
    after = BotRegistry([folder], env=False, cwd=False, entry_points=False).identity("my-mcts")
    assert after["digest"] != before["digest"]


def test_the_shipped_networks_are_the_identity_of_the_bots_that_load_them_only():
    shipped = {f"bots/weights/{p.name}" for p in valuenet.SHIPPED}
    assert shipped and len(shipped) == len(valuenet.SHIPPED)
    for module in ("kdtourney.bots.mcts", "kdtourney.bots.value_greedy"):
        assert shipped <= set(builtin_files(module))
    for module in ("kdtourney.bots.greedy", "kdtourney.bots.random_bot",
                   "kdtourney.bots.expectimax", "kdtourney.bots.mce"):
        files = set(builtin_files(module))
        assert (not shipped & files and "engine/tiles.csv" in files
                and "bots/registry.py" not in files)


def test_the_example_bots_play_with_their_own_network():
    registry = BotRegistry([EXAMPLE / "bots"], env=False, cwd=False, entry_points=False)
    for name in ("my-mcts", "my-value-greedy"):
        cls = registry.bots[name].cls
        assert [Path(p).name for p in cls.weights] == ["my_value.npz"]
        check_bot(cls, strict=True, settings=SHIPPED_RULES[:1],
                  **({"iterations": 30} if name == "my-mcts" else {}))
    with pytest.raises(EntrantError, match="parameter"):
        registry.resolve("my-mcts:weights=/etc/passwd")


def make_reference():
    """Write REFERENCE from the shipped networks (needs PyTorch)."""
    out = {}
    for players, seed in ((4, 900), (2, 901)):
        rules = RULES[players]
        net = valuenet.network_for(valuenet.SHIPPED, rules)
        rows = [(h, g, k % players) for k, (h, g) in enumerate(positions(rules, seed, every=6))]
        x = np.array([features(g, v) for _, g, v in rows])
        out.update({f"seeds{players}": np.full(len(rows), seed),
                    f"viewers{players}": [v for _, _, v in rows],
                    f"lengths{players}": [len(h) for h, _, _ in rows],
                    f"actions{players}": np.array([a for h, _, _ in rows for a in h],
                                                  dtype=np.int64),
                    f"features{players}": x,
                    f"outputs{players}": torch_forward(net.arrays, x).astype(np.float32)})
    np.savez_compressed(REFERENCE, **out)
    print(f"wrote {REFERENCE}")


if __name__ == "__main__":
    make_reference()
