"""Learning environments' speed, one core: prints `name: value` lines.

    python benchmarks/bench_env.py [--seconds 5] [--players 4]

Steps (decisions) per second with uniformly random legal actions, 4-player games by default:
- pettingzoo: `pettingzoo_env()` driven by `agent_iter`/`last`/`step`, the action drawn from the
  mask with numpy, as a PettingZoo user loop does (needs the `rl` extra);
- batch_N: `BatchEnv(num_envs=N)` for N = 1, 64, 1024, every `step` plays N decisions; the
  actions drawn with `BatchEnv.random_actions` (numpy) and counted in the time;
- batch_N_step_only: the same run, only the time spent inside `step`;
- performance_benchmark_turns_per_s: PettingZoo's own `performance_benchmark` (wall clock, 5 s,
  printed by it, then parsed here);
- first_use_cpu_s: a fresh process with an empty Numba cache, CPU seconds of the engine's warm-up
  (compiling its kernels), then of a first BatchEnv step beyond it (compiling the environment's);
  then the same process again on the cache they filled.
All other figures are CPU time of this process (time.process_time), so that other processes on
a shared machine do not count; the compiled code is warmed before timing.
"""

import argparse
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

from kdtourney.env import BatchEnv


def bench_batch(num_envs, players, seconds):
    env = BatchEnv(num_envs, players=players, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        env.step(env.random_actions(rng))
    steps, inside = 0, 0.0
    start = time.process_time()
    while time.process_time() - start < seconds:
        actions = env.random_actions(rng)
        t = time.process_time()
        env.step(actions)
        inside += time.process_time() - t
        steps += num_envs
    return steps / (time.process_time() - start), steps / inside


def bench_pettingzoo(players, seconds):
    from kdtourney.env import pettingzoo_env

    env = pettingzoo_env(players)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        for _ in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                action = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                action = int(legal[rng.integers(len(legal))])
                steps += 1
            env.step(action)
        env.reset()
    return steps / (time.process_time() - start)


def performance_benchmark_figure(players):
    from pettingzoo.test import performance_benchmark

    from kdtourney.env import pettingzoo_env

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        performance_benchmark(pettingzoo_env(players))
    return float(re.search(r"([\d.]+) turns per second", out.getvalue()).group(1))


_FIRST_USE = """
import time
from kdtourney.engine import warm_up
start = time.process_time()
warm_up()
engine = time.process_time()
import numpy as np
from kdtourney.env import BatchEnv
env = BatchEnv(4, seed=0)
env.step(env.random_actions(np.random.default_rng(0)))
print(engine - start, time.process_time() - engine)
"""


def first_use():
    """[(engine s, env s) CPU] of a fresh process with an empty Numba cache, then with it filled."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        runs = [subprocess.run([sys.executable, "-c", _FIRST_USE], env=env, check=True,
                               capture_output=True, text=True) for _ in range(2)]
    return [tuple(map(float, run.stdout.split())) for run in runs]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()
    pz = bench_pettingzoo(args.players, args.seconds)
    print(f"pettingzoo_steps_per_s: {pz:,.0f}")
    for n in (1, 64, 1024):
        total, inside = bench_batch(n, args.players, args.seconds)
        print(f"batch_{n}_steps_per_s: {total:,.0f} ({total / pz:.1f}x pettingzoo)")
        print(f"batch_{n}_step_only_steps_per_s: {inside:,.0f}")
    print(f"performance_benchmark_turns_per_s: {performance_benchmark_figure(args.players):,.0f}")
    (engine, env), (engine_cached, env_cached) = first_use()
    print(f"first_use_cpu_s: engine {engine:.1f}, env beyond it {env:.1f}; cached: engine "
          f"{engine_cached:.1f}, env {env_cached:.1f}")


if __name__ == "__main__":
    main()
