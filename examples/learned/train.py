"""Train a value network for kdtourney's search bots: positions from real play, labelled with how
the game ended, a small network fitted to them with PyTorch, saved as a weights file the bots load.

    pip install 'kdtourney[learn]'                  # PyTorch's CPU build, pinned
    python examples/learned/train.py --players 4 --out my_value.npz

Data. Games of the engine between the built-in bots, each from its own seed (TRAIN_SEEDS onwards:
never a deal the benchmarks or tests play): --search-games games of one `mcts` at
--search-iterations iterations a decision against `greedy` players (the seat turns with the
game), every decision of the `mcts` seat a position seen by it; and --greedy-games games of
`greedy` players only, --samples positions a game seen by every seat. A position's label is what
its viewer made of the game: the final victory margin (own score minus the best other) and own /
(own + best other). The features are kdtourney.bots.net_kernels's, computed by the same kernel
the bots evaluate with. The games run on --workers processes; the data does not depend on their
number.

Training. Inputs standardised, two ReLU layers (--hidden), mean squared error on both outputs
(scaled to similar sizes), Adam, --epochs over the positions in an order fixed by --seed, one
torch thread (--threads): the same command writes the same file. The standardisation and the
output scales are folded into the saved layers, so the bots run the network as saved. A tenth of
the games is held out: their loss is printed after every epoch. --checkpoints K also saves the
network K times during training, the last time at its end (OUT.posN.npz after N positions seen),
for a learning curve (benchmarks/bench_learned.py --curve).

--data FILE keeps the generated positions (npz) and reuses them when FILE exists, so a new
network can be trained on the same games without playing them again.
"""

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

from kdtourney.bots import kernels as BK
from kdtourney.bots import net_kernels as NK
from kdtourney.bots import train_kernels
from kdtourney.bots.greedy import GreedyBot
from kdtourney.bots.mcts import MCTSBot
from kdtourney.bots.valuenet import ValueNet
from kdtourney.engine import Game, Rules
from kdtourney.engine import kernels as K

TRAIN_SEEDS = 1 << 40           # game seeds of the training games: TRAIN_SEEDS + offset + index
KIND_OFFSET = {"search": 0, "greedy": 1 << 32, "playouts": 2 << 32}
MARGIN_SCALE, RATIO_SCALE = 20.0, 0.1  # outputs trained as margin / 20 and (ratio - 0.5) / 0.1


def _labels(game, viewer):
    scores = game.scores()
    own = scores[viewer]
    best = max(s for p, s in enumerate(scores) if p != viewer)
    return own - best, own / (own + best) if own + best else 0.5


def play_game(task):
    """One training game: (index, positions, labels float32[n, 2]); positions are the engine's
    arrays (bits[n], bbox[n], st[n]) and the viewer of each (viewers[n])."""
    rules, kind, index, args = task
    seed = TRAIN_SEEDS + index + KIND_OFFSET[kind]
    game = Game(rules, seed)
    n = rules.players
    search = index % n if kind == "search" else -1
    bots = [MCTSBot(iterations=args.search_iterations) if p == search else GreedyBot()
            for p in range(n)]
    for p, bot in enumerate(bots):
        bot.setup(p, rules, seed * 8 + p)
    work = BK.work_buffers()
    rng = np.random.default_rng(seed)
    combos = np.empty((3, 4 * K.MAX_ACTIONS), dtype=np.int64)
    # the decisions whose positions are kept (greedy games: `samples` drawn from the seed)
    total = 2 * rules.rounds * rules.players * rules.kings_per_player
    picked = set(rng.choice(total, size=min(args.samples, total), replace=False).tolist())
    at = set(rng.choice(total, size=min(args.current, total), replace=False).tolist())
    states, labels, viewers = [], [], []
    decision = 0
    while not game.is_over:
        p = game.current_player
        bits, bbox, st = game.arrays
        if kind == "search" and p == search:
            states.append((bits.copy(), bbox.copy(), st.copy()))
            viewers.append(p)
        elif kind == "greedy" and decision in picked:
            for viewer in range(n):
                states.append((bits.copy(), bbox.copy(), st.copy()))
                viewers.append(viewer)
        if kind == "playouts" and decision in at:  # the position itself, for its player
            y = np.zeros((1, 2))
            none = np.full(1, -1, dtype=np.int64)
            train_kernels.playout_labels(bits, bbox, st, p, none, none, 1, args.playouts,
                                         BK.POLICY_GREEDY, int(rng.integers(1 << 62)), y)
            states.append((bits.copy(), bbox.copy(), st.copy()))
            viewers.append(p)
            labels.append(y[0])
        if kind == "playouts" and decision in picked and st[K.ST_PHASE] == K.PHASE_PLACE:
            places, claims, keys = combos
            m = BK.greedy_combos(bits, bbox, st, places, claims, keys, *work)
            order = np.argsort(-keys[:m], kind="stable")
            chosen = list(order[:args.top])
            if m > args.top:
                chosen += rng.choice(order[args.top:], size=min(args.random, m - args.top),
                                     replace=False).tolist()
            pl, cl = places[chosen].copy(), claims[chosen].copy()
            y = np.zeros((len(chosen), 2))
            train_kernels.playout_labels(bits, bbox, st, p, pl, cl, len(chosen), args.playouts,
                                         BK.POLICY_GREEDY, int(rng.integers(1 << 62)), y)
            for i in range(len(chosen)):
                b, x, s = bits.copy(), bbox.copy(), st.copy()
                K.apply_action(b, x, s, pl[i])
                if cl[i] >= 0:
                    K.apply_action(b, x, s, cl[i])
                if s[K.ST_PHASE] != K.PHASE_OVER:
                    states.append((b, x, s))
                    viewers.append(p)
                    labels.append(y[i])
        game.apply(bots[p].act(game.view(p)))
        decision += 1
    if kind != "playouts":
        labels = [_labels(game, v) for v in viewers]
    arrays = tuple(np.array([s[j] for s in states], dtype=np.int64) for j in range(3))
    return (index, arrays, np.array(viewers, dtype=np.int64),
            np.array(labels, dtype=np.float32).reshape(-1, 2))


def generate(rules, args):
    """The positions of every game, in game order: {bits, bbox, st, viewers, labels, games}."""
    tasks = [(rules, "search", i, args) for i in range(args.search_games)]
    tasks += [(rules, "greedy", i, args) for i in range(args.greedy_games)]
    tasks += [(rules, "playouts", i, args) for i in range(args.playout_games)]
    parts = []
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(args.workers) as pool:
        for k, (_, arrays, viewers, labels) in enumerate(pool.imap(play_game, tasks, chunksize=4)):
            if len(labels):
                parts.append((*arrays, viewers, labels, np.full(len(labels), k, dtype=np.int64)))
            if (k + 1) % max(1, len(tasks) // 10) == 0:
                print(f"  {k + 1}/{len(tasks)} games, {time.perf_counter() - t0:.0f} s", flush=True)
    names = ("bits", "bbox", "st", "viewers", "labels", "games")
    return {name: np.concatenate([part[j] for part in parts]) for j, name in enumerate(names)}


def features_of(data):
    """The features of every position (the kernel the bots evaluate with)."""
    out = np.zeros((len(data["labels"]), NK.n_features(data["bits"].shape[1])), dtype=np.float32)
    train_kernels.observe_all(data["bits"], data["bbox"], data["st"], data["viewers"], out)
    return out


def train(features, labels, games, args, out):
    """Fit the network; returns the ValueNet (saving checkpoints on the way)."""
    import torch
    from torch import nn

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    held = np.random.default_rng(args.seed).random(games.max() + 1) < 0.1
    val = held[games]
    mean = features[~val].mean(axis=0)
    std = features[~val].std(axis=0)
    std[std < 1e-6] = 1.0
    target = np.stack([labels[:, 0] / MARGIN_SCALE, (labels[:, 1] - 0.5) / RATIO_SCALE], axis=1)
    xt = torch.from_numpy((features[~val] - mean) / std)
    yt = torch.from_numpy(target[~val].astype(np.float32))
    xv = torch.from_numpy((features[val] - mean) / std)
    yv = torch.from_numpy(target[val].astype(np.float32))
    h1, h2 = args.hidden
    model = nn.Sequential(nn.Linear(features.shape[1], h1), nn.ReLU(), nn.Linear(h1, h2), nn.ReLU(),
                          nn.Linear(h2, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    loss_fn = nn.MSELoss()
    order_rng = torch.Generator().manual_seed(args.seed)
    seen = 0
    # the last one: the final network
    marks = [int(len(xt) * args.epochs * (k + 1) / args.checkpoints)
             for k in range(args.checkpoints if args.checkpoints > 1 else 0)]

    def export():
        w = [p.detach().numpy().astype(np.float64) for p in model.parameters()]
        w1, b1, w2, b2, w3, b3 = w
        scale = np.array([MARGIN_SCALE, RATIO_SCALE])
        layers = (w1 / std, b1 - (w1 / std) @ mean, w2, b2, w3 * scale[:, None],
                  b3 * scale + np.array([0.0, 0.5]))
        return ValueNet(tuple(a.astype(np.float32) for a in layers), meta(seen))

    def meta(positions):
        return {"rules": rules_dict(args), "features": int(features.shape[1]),
                "hidden": list(args.hidden), "search_games": args.search_games,
                "search_iterations": args.search_iterations, "greedy_games": args.greedy_games,
                "samples": args.samples, "epochs": args.epochs, "positions": int(len(xt)),
                "positions_seen": int(positions), "seed": args.seed, "torch": torch.__version__,
                "threads": args.threads}

    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(xt), generator=order_rng)
        total = 0.0
        for start in range(0, len(xt), args.batch):
            idx = perm[start:start + args.batch]
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
            seen += len(idx)
            while marks and seen >= marks[0]:
                path = out.with_name(f"{out.stem}.pos{marks.pop(0)}.npz")
                export().save(path)
        sched.step()
        model.eval()
        with torch.no_grad():
            pred = model(xv)
            vloss = loss_fn(pred, yv).item()
            vmargin = float((pred[:, 0] - yv[:, 0]).abs().mean()) * MARGIN_SCALE
        print(f"  epoch {epoch + 1}/{args.epochs}: train loss {total / len(xt):.4f}, held-out loss "
              f"{vloss:.4f} (margin off by {vmargin:.2f} points on average), "
              f"{time.perf_counter() - t0:.0f} s", flush=True)
    return export()


def rules_dict(args):
    return Rules(players=args.players, harmony=args.harmony,
                 middle_kingdom=args.middle_kingdom).to_dict()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    ap.add_argument("--harmony", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--middle-kingdom", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--search-games", type=int, default=0)
    ap.add_argument("--search-iterations", type=int, default=300)
    ap.add_argument("--greedy-games", type=int, default=0)
    ap.add_argument("--samples", type=int, default=4, help="decisions sampled per greedy-only game")
    ap.add_argument("--playout-games", type=int, default=0)
    ap.add_argument("--playouts", type=int, default=32)
    ap.add_argument("--current", type=int, default=0,
                    help="decisions a game whose position is labelled")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--random", type=int, default=4)
    ap.add_argument("--hidden", type=int, nargs=2, default=[64, 32])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=mp.cpu_count())
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (pinned: results depend on it)")
    ap.add_argument("--checkpoints", type=int, default=1)
    ap.add_argument("--data", type=Path,
                    help="npz of the generated positions: read when it exists, else written")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    reuse = args.data is not None and args.data.exists()
    counts = (args.search_games, args.greedy_games, args.playout_games)
    if min(*counts, args.samples) < 0 or not (reuse or sum(counts)):
        ap.error("give some games: --search-games, --greedy-games and --playout-games are counts, "
                 "not all 0")
    try:
        import torch  # noqa: F401
    except ImportError:
        sys.exit("Error: training needs PyTorch: pip install 'kdtourney[learn]'")
    rules = Rules(**rules_dict(args))
    t0 = time.perf_counter()
    if reuse:
        with np.load(args.data) as stored:
            data = dict(stored)
        print(f"positions: {len(data['labels'])} read from {args.data}")
    else:
        print(f"playing {args.search_games} mcts games ({args.search_iterations} iterations), "
              f"{args.greedy_games} greedy games and {args.playout_games} games labelled by "
              f"playouts, {args.players} players, {args.workers} workers", flush=True)
        data = generate(rules, args)
        print(f"positions: {len(data['labels'])} from {data['games'].max() + 1} games in "
              f"{time.perf_counter() - t0:.0f} s (wall)", flush=True)
        if args.data:
            np.savez_compressed(args.data, **data)
    features, labels, games = features_of(data), data["labels"], data["games"]
    t1 = time.perf_counter()
    net = train(features, labels, games, args, args.out)
    net.save(args.out)
    print(f"training: {time.perf_counter() - t1:.0f} s; "
          f"total {time.perf_counter() - t0:.0f} s (wall)")
    print(f"saved to {args.out}: {json.dumps(net.meta, sort_keys=True)}")


if __name__ == "__main__":
    main()
