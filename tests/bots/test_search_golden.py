"""The search bots play the very games they played when tests/data/golden_search_games.json was
written (before the engine and playouts were made faster): at a fixed number of iterations, the
same seeds give the same moves. mcts at its defaults in 2 and 4 players and in Mighty Duel, and the
switches and bots that run other kernels at smaller budgets.

Regenerate (only when a change of play is intended and measured):
    python tests/bots/test_search_golden.py --write
"""

import json
import sys
from pathlib import Path

import pytest
from play_support import play_against_greedy

from kdtourney.bots.expectimax import ExpectimaxBot
from kdtourney.bots.heuristic import HeuristicBot
from kdtourney.bots.mce import MCEBot
from kdtourney.bots.mcts import MCTSBot
from kdtourney.bots.random_bot import RandomBot
from kdtourney.bots.value_greedy import ValueGreedyBot
from kdtourney.engine import Rules

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden_search_games.json"

R2 = Rules(2)
R2_HM = Rules(2, harmony=True, middle_kingdom=True)
R4_HM = Rules(4, harmony=True, middle_kingdom=True)
R3 = Rules(3)
DUEL = Rules(2, variant="duel")

# name: (rules, seed, the bot in seat 0 (greedy elsewhere))
GAMES = {
    "mcts_2p": (R2, 1, lambda: MCTSBot()),
    "mcts_2p_b": (R2, 2, lambda: MCTSBot()),
    "mcts_4p_hm": (R4_HM, 3, lambda: MCTSBot()),
    "mcts_duel": (DUEL, 4, lambda: MCTSBot()),
    "mcts_3p": (R3, 5, lambda: MCTSBot(iterations=300)),
    "mcts_random_2p": (R2, 6, lambda: MCTSBot(iterations=300, policy="random")),
    "mcts_player_greedy_4p": (R4_HM, 7, lambda: MCTSBot(iterations=200, policy="player-greedy")),
    "mcts_heuristic_4p": (R4_HM, 8, lambda: MCTSBot(iterations=200, policy="heuristic")),
    "mcts_own_heuristic_2p": (R2_HM, 9, lambda: MCTSBot(iterations=200, policy="own-heuristic")),
    "mcts_opponents_4p": (R4_HM, 10, lambda: MCTSBot(iterations=200, opponents="full-greedy")),
    "mcts_others_full_4p": (R4_HM, 11, lambda: MCTSBot(iterations=150,
                                                       policy="others-full-greedy")),
    "mcts_halving_2p": (R2_HM, 12, lambda: MCTSBot(iterations=300, root="halving", root_k=6,
                                                   endgame="exact")),
    "mcts_wdl_reuse_game_duel": (DUEL, 13, lambda: MCTSBot(iterations=300, measure="wdl",
                                                           reuse="game", widen=0.0)),
    "mcts_net_2p_hm": (R2_HM, 14, lambda: MCTSBot(iterations=200, eval="net", depth=1)),
    "mcts_mix_4p_hm": (R4_HM, 15, lambda: MCTSBot(iterations=100, eval="mix", measure="margin")),
    "mce_4p_hm": (R4_HM, 16, lambda: MCEBot(iterations=300)),
    "mce_full_2p": (R2, 17, lambda: MCEBot(iterations=100, policy="full-greedy", candidates=5)),
    "expectimax_4p_hm": (R4_HM, 18, lambda: ExpectimaxBot(iterations=300)),
    "expectimax_duel": (DUEL, 19, lambda: ExpectimaxBot(iterations=200)),
    "heuristic_4p_hm": (R4_HM, 20, HeuristicBot),
    "value_greedy_2p_hm": (R2_HM, 21, ValueGreedyBot),
    "random_duel": (DUEL, 22, RandomBot),
}


@pytest.mark.parametrize("name", list(GAMES))
def test_a_search_bot_plays_the_recorded_game(name):
    expected = json.loads(GOLDEN.read_text())[name]
    assert play_against_greedy(*GAMES[name]) == expected


if __name__ == "__main__":
    if "--write" not in sys.argv:
        sys.exit("usage: python tests/bots/test_search_golden.py --write  (records the games)")
    GOLDEN.write_text(json.dumps({name: play_against_greedy(*game) for name, game in GAMES.items()},
                                 separators=(",", ":")) + "\n")
    print(f"wrote {GOLDEN} ({GOLDEN.stat().st_size:,} bytes)")
