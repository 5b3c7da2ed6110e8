"""Train the linear policy of bots/_linear.py against random players, by evolution strategies on
BatchEnv, and save its weights beside the bot (bots/linear_rl.npz).

    python examples/rl/train.py [--iterations 20] [--games 64] [--players 2] [--seed 0]

Each iteration scores --population perturbations of the weights (antithetic pairs, the same
--games deals for all) by the agent's mean victory margin against random players, and moves the
weights along the rank-weighted perturbations (OpenAI-ES). Every 10 iterations it prints the
current weights' win share and margin on fresh deals.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from kdtourney.env import BatchEnv

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "bots"))
from _linear import N_WEIGHTS, best_actions  # noqa: E402

OUT = HERE / "bots" / "linear_rl.npz"


def play(weights, env, seed, rng):
    """One game per slot of env from seed (the agent in seat slot % players, random players in the
    others): the agent's mean (margin, rank reward)."""
    obs, mask, player = env.reset(seed)
    seats = np.arange(env.num_envs) % env.rules.players
    margin = np.zeros(env.num_envs)
    done = np.zeros(env.num_envs, dtype=bool)
    while not done.all():
        actions = env.random_actions(rng)
        mine = np.flatnonzero(player == seats)
        if len(mine):
            actions[mine] = best_actions(weights, obs[mine], mask[mine], env.rules)
        obs, mask, rewards, dones, player = env.step(actions)
        first = dones & ~done
        margin[first] = rewards[first, seats[first]]
        done |= dones
    return margin


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--games", type=int, default=64, help="deals per evaluation")
    parser.add_argument("--population", type=int, default=16,
                        help="perturbations per iteration (even)")
    parser.add_argument("--sigma", type=float, default=0.5)
    parser.add_argument("--lr", type=float, default=0.3)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.population < 2 or args.population % 2:
        parser.error(f"--population must be an even number of at least 2, not {args.population}")
    rng = np.random.default_rng(args.seed)
    env = BatchEnv(args.games, players=args.players, reward="margin")
    weights = np.zeros(N_WEIGHTS)
    start = time.time()
    for it in range(args.iterations + 1):
        if it % 10 == 0:
            margin = play(weights, env, 10**9 + it * args.games, rng)
            print(f"iteration {it:3d}  {time.time() - start:5.0f} s  vs random: win share "
                  f"{(margin > 0).mean() + 0.5 * (margin == 0).mean():.2f}, "
                  f"mean margin {margin.mean():+.1f}",
                  flush=True)
        if it == args.iterations:
            break
        half = rng.standard_normal((args.population // 2, N_WEIGHTS))
        noise = np.concatenate([half, -half])
        deal = int(rng.integers(10**9))  # common deals for every perturbation
        fitness = np.array([play(weights + args.sigma * e, env, deal, rng).mean() for e in noise])
        ranks = fitness.argsort().argsort() / (len(fitness) - 1) - 0.5
        weights += args.lr / (len(noise) * args.sigma) * (ranks @ noise)
    np.savez(args.out, weights=weights, players=args.players)
    print(f"weights {np.round(weights, 3).tolist()} saved to {args.out}")


if __name__ == "__main__":
    main()
