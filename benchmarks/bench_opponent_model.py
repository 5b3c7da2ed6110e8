"""How well the fast greedy (the search bots' playout policy) predicts the `greedy` bot's moves.

The search bots model the other players by a policy; against `greedy` opponents the question is
how often that model plays what a `greedy` player would. Plays games of `greedy` players (the
full greedy, as the bot plays; Harmony and Middle Kingdom) and at every decision with more than
one legal action asks the fast greedy too. Prints, for placements and claims apart: how often
the two play the same action, how often the fast greedy's action is one of those `greedy` ranks
best (`greedy` breaks ties at random, so no model can do better than that set), and how often
that set holds more than one action.

    python benchmarks/bench_opponent_model.py --games 150 --players 4
"""

import argparse

from kdtourney.bots import kernels as BK
from kdtourney.engine import Game, Rules
from kdtourney.engine import kernels as K
from kdtourney.engine.game import rng_state


def measure(players, games, first_seed):
    rules = Rules(players=players, harmony=True, middle_kingdom=True)
    kb, bb, sc, ac = BK.work_buffers()
    fb = BK.plan_buffers()
    _, places, claims, keys = fb
    rng = rng_state(first_seed)
    counts = {phase: {"decisions": 0, "same": 0, "among_best": 0, "tied": 0}
              for phase in ("place", "claim")}
    for seed in range(first_seed, first_seed + games):
        game = Game(rules, seed)
        fb[0][:] = -1
        while not game.is_over:
            bits, bbox, st = game.arrays
            full = int(BK.full_greedy_action(bits.copy(), bbox.copy(), st.copy(), rng, fb, kb, bb,
                                             sc, ac))
            if len(game.legal_actions()) > 1:
                fast = int(BK.fast_greedy_action(bits.copy(), bbox.copy(), st.copy(), rng, kb, bb,
                                                 sc, ac))
                c = counts[game.phase]
                c["decisions"] += 1
                c["same"] += fast == full
                if game.phase == "place":
                    n = BK.greedy_combos(bits, bbox, st, places, claims, keys, kb, bb, sc, ac)
                    best = set(places[:n][keys[:n] == keys[:n].max()].tolist())
                elif game.round == 0:  # the first row's claim: the most crowns on one half
                    crowns = {a: max(BK.TILE_CROWNS[a - K.CLAIM_BASE])
                              for a in game.legal_actions()}
                    best = {a for a, k in crowns.items() if k == max(crowns.values())}
                else:  # a claim planned with the placement is one of those whose best spot is best
                    n = BK.claim_keys(bits, bbox, st, claims, keys, kb, bb, sc, ac)
                    best = set(claims[:n][keys[:n] == keys[:n].max()].tolist())
                assert full in best, "greedy's own action must be one of its best"
                c["among_best"] += fast in best
                c["tied"] += len(best) > 1
            game.apply(full)
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=150)
    ap.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    ap.add_argument("--first-seed", type=int, default=0)
    args = ap.parse_args()
    for phase, c in measure(args.players, args.games, args.first_seed).items():
        n = max(c["decisions"], 1)
        print(f"{phase}: {c['decisions']} decisions ({args.games} games, {args.players} players): "
              f"fast greedy plays greedy's action {c['same'] / n:.1%}, one of greedy's best "
              f"{c['among_best'] / n:.1%}; greedy's best is a tie of several {c['tied'] / n:.1%}")


if __name__ == "__main__":
    main()
