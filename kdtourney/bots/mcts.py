"""`mcts`: information-set Monte Carlo tree search (determinized UCT) with progressive bias."""

import math
import warnings

import numpy as np

from kdtourney.bots import endgame as EG
from kdtourney.bots import heuristic_kernels as HK
from kdtourney.bots import kernels as BK
from kdtourney.bots import search_kernels as SK
from kdtourney.bots import valuenet
from kdtourney.bots.base import Bot
from kdtourney.bots.greedy import check_budget, check_choice, check_number, run_budget, time_budget
from kdtourney.bots.heuristic import STANDALONE, WEIGHT_SETS, weight_vector
from kdtourney.engine import kernels as K
from kdtourney.engine.game import rng_state
from kdtourney.engine.kernels import rand_u64
from kdtourney.engine.kingdom import square_array

_CHUNK = 256  # iterations per kernel call with an iteration budget (the tree may grow between)
REUSE = {"none": 0, "turn": 1, "game": 2}
ROOTS = {"uct": False, "halving": True}
ENDGAMES = {"off": False, "exact": True}
OPPONENTS = {"policy": -1, "full-greedy": BK.POLICY_FULL_GREEDY}  # -1: the playout policy


class MCTSBot(Bot):
    """Determinized UCT over its own decisions, progressive bias from the greedy evaluation.

    Every iteration deals the unseen dominoes anew (from the bot's seeded rng), walks one tree of
    the bot's own decisions (keyed by its action sequence; the other players' moves in between are
    played by the policy `opponents`), adds one node and plays out. Tree policy: among the
    children a node may consider (at a place decision visited n times, the 1 + widen sqrt(n) with
    the best greedy evaluation), unvisited legal children first, best greedy prior first; then
    Q + c sqrt(ln(availability) / n) + bias (h - h_best) / 100 / (n + 1), where h is the child's
    greedy evaluation in points and availability counts the iterations in which the child was legal.
    The root's children are compared on the same deals (the k-th visit of each gets deal k).
    The move played is the most visited root child. reuse: the tree of the decision before is kept
    when this decision is the one its move led to: none, turn (from the place to the claim
    decision of a turn) or game (also from a claim to the next turn's placement).

    iterations: tree iterations per decision (or time: seconds per decision, which wins when given).
    c: exploration constant. bias: weight of the progressive bias. widen: progressive widening
    (0: every placement at once). policy: random | greedy | player-greedy | full-greedy (the
    playouts, and the other players' moves inside the tree, as `greedy` plays) | heuristic (the
    weighted heuristic of `kdtourney.bots.heuristic` in two stages, with the weights of
    playout_weights) | own-heuristic (the bot's own moves so, the others' greedy) |
    others-full-greedy (the others as `greedy` plays, the bot's own moves the fast greedy).
    playout_weights: the heuristic policies' weights, a set of `heuristic.WEIGHT_SETS`: standalone
    (the `heuristic` bot's) or playout (tuned as own-heuristic's playouts); the instance attribute
    `heuristic_weights` holds them by name.
    opponents: policy (the other players' moves inside the tree, between the bot's own decisions,
    by the playout policy) | full-greedy (those moves as `greedy` plays, the playouts by `policy`:
    greedy opponents modelled exactly where their moves are few, a handful an iteration).
    measure: wdl | score | ratio | margin (all in [0, 1]; score is points / 100, margin is 0.5 +
    victory margin / 200).

    root: uct (the root is a node as any other; the move is its most visited child) or halving
    (Sequential Halving at the root: its arms, the placements of the heuristic's root_k best
    whole-turn moves at a place decision (every placement when root_k is 0) or every legal claim,
    get equal shares of the budget in rounds, the better half by mean result kept after each; the
    move is the arm left). endgame: off, or exact (once no domino is left to draw, the move of
    `kdtourney.bots.endgame`'s solution, no search).

    eval: how a new leaf is valued: playout (a playout to the end), net (the value network of
    these rules, `kdtourney.bots.valuenet`, after a playout of `depth` more rounds; measure ratio
    or margin) or mix ((1 - net_share) playout + net_share network). The networks are the files of
    the class attribute `weights` (the shipped ones; a subclass in a bots folder names its own,
    listed in KDTOURNEY_FILES); under rules none of them is for, the bot evaluates with playouts
    and warns once.

    Defaults measured with benchmarks/bench_bots.py (4 players, bonuses on, against three greedy).
    reuse turn over game, paired on the same deals: +0.96 +- 0.95 at 4000 iterations, +0.7 +- 0.85
    at 0.1 s (400 games each). Likely why (not proven): the next turn's node kept by game holds
    statistics of iterations that dealt other rows than the one now on the table, about as many
    as the new search's own.
    At 1000 iterations (200 games each, reuse game): c 0.2 +14.5 +- 2.0, c 0.1 +13.6; measure
    margin +14.3 +- 2.3; widen 0 with reuse none +13.7 +- 2.2 (policy greedy, bias 5 and c 0.2 were
    tuned before at 0.1 s).
    """

    name = "mcts"
    weights = valuenet.SHIPPED

    def __init__(self, iterations=1000, time=None, c=0.2, bias=5.0, widen=1.0, reuse="turn",
                 policy="greedy", measure="ratio", eval="playout", net_share=0.5, depth=0,
                 root="uct", root_k=0, endgame="off", playout_weights="standalone",
                 opponents="policy"):
        self.iterations, self.time = check_budget(iterations, time)
        self.root = check_choice("root", root, ROOTS)
        self.root_k = check_number("root_k", root_k, integer=True)
        self.endgame = check_choice("endgame", endgame, ENDGAMES)
        self.heuristic_weights = dict(check_choice("playout_weights", playout_weights, WEIGHT_SETS))
        self.c = float(check_number("c", c))
        self.bias = float(check_number("bias", bias))
        self.widen = float(check_number("widen", widen))
        self.reuse = check_choice("reuse", reuse, REUSE)
        self.policy = check_choice("policy", policy, HK.POLICIES)
        self.opponents = check_choice("opponents", opponents, OPPONENTS)
        self.measure = check_choice("measure", measure, BK.MEASURES)
        self.eval = check_choice("eval", eval, SK.EVALS)
        if self.eval != SK.EVAL_PLAYOUT and measure not in ("ratio", "margin"):
            raise ValueError(f"eval={eval} needs measure ratio or margin (what the network "
                             f"predicts), not {measure!r}")
        self.net_share = float(check_number("net_share", net_share))
        if self.net_share > 1:
            raise ValueError(f"net_share must be a number from 0 to 1, not {net_share!r}")
        self.depth = check_number("depth", depth, integer=True)
        if self.eval != SK.EVAL_PLAYOUT:
            valuenet.networks(self.weights)  # a bad weights file is an error before play
        self._net, self._evaluation = None, SK.EVAL_PLAYOUT
        self._rng = rng_state(0)
        self._ti, self._tf = self._arrays(1 << 15)
        self._ncount = np.zeros(1, dtype=np.int64)
        self._hw = self._playout_buffers()
        self._fb = self._plan_buffers()
        self._arm_weights = weight_vector(STANDALONE)
        self._work = BK.work_buffers()
        self._combos = (np.empty(4 * K.MAX_ACTIONS, dtype=np.int64),
                        np.empty(4 * K.MAX_ACTIONS, dtype=np.int64),
                        np.empty((4 * K.MAX_ACTIONS, HK.N_WEIGHTS), dtype=np.float64))
        self._expect = None  # (action played, own squares after it, its node) of the last decision
        self.last_iterations = 0

    def _playout_buffers(self):
        """The heuristic policy's weights and work (HK.heuristic_buffers), or None for the greedy
        policies: mcts_run is then its specialisation without the heuristic (policy_action)."""
        if self.policy not in HK.HEURISTIC_POLICIES:
            return None
        return HK.heuristic_buffers(weight_vector(self.heuristic_weights))

    def _plan_buffers(self):
        """The full greedy's plan buffers (BK.plan_buffers), or None when every move of the search
        is the fast greedy's: mcts_run is then its specialisation without the other policies."""
        opponents = self.policy if self.opponents < 0 else self.opponents
        if self.policy == opponents == BK.POLICY_GREEDY:
            return None
        return BK.plan_buffers()

    @staticmethod
    def _arrays(cap):
        return (np.zeros((cap, SK.TI_COLS), dtype=np.int64),
                np.zeros((cap, SK.TF_COLS), dtype=np.float64))

    def _grow(self, cap):
        ti, tf = self._arrays(cap)
        ti[:len(self._ti)] = self._ti
        tf[:len(self._tf)] = self._tf
        self._ti, self._tf = ti, tf

    def setup(self, seat, rules, seed):
        self._rng = rng_state(seed)
        self._expect = None
        self._hw = self._playout_buffers()
        self._net, self._evaluation = None, SK.EVAL_PLAYOUT  # None: mcts_run without the network
        if self.eval != SK.EVAL_PLAYOUT:
            net = valuenet.network_for(self.weights, rules)
            if net is None:
                warnings.warn(f"{self.name}: no value network for "
                              f"{valuenet.describe_rules(rules)}; "
                              f"it evaluates with playouts", stacklevel=2)
            else:
                self._net, self._evaluation = net.arrays, self.eval

    def kernel_parts(self):
        return SK.mcts_parts(self._work, self._hw, self._fb)

    def _root(self, view):
        """Make the tree's root this position: the subtree of the move played last when this is
        the decision it led to (and reuse allows), else an empty tree."""
        node = self._reused(view)
        if node >= 0:
            ti, tf = self._arrays(len(self._ti))
            ncount = np.zeros(1, dtype=np.int64)
            if SK.mcts_subtree(self._ti, self._tf, node, ti, tf, ncount):
                self._ti, self._tf, self._ncount = ti, tf, ncount
                return
        SK.mcts_reset(self._ti, self._tf, self._ncount)

    def _reused(self, view):
        """The node of this decision in the last decision's tree, or -1. The position alone says
        whether this is the decision the last move led to (a view rebuilt in another process has
        no move history, and its kingdoms may be laid out otherwise in the kernels' words): the own
        squares are as that move left them, and a claimed domino is ours."""
        expect, self._expect = self._expect, None
        if expect is None:
            return -1
        action, squares, node = expect
        level = REUSE["game"] if action >= K.CLAIM_BASE else REUSE["turn"]
        if self.reuse < level or not np.array_equal(view.square_array(view.player), squares):
            return -1
        if action >= K.CLAIM_BASE:
            st = view.arrays[2]
            domino = action - K.CLAIM_BASE
            if not any(st[row + j] == domino and st[owner + j] == view.player for j in range(4)
                       for row, owner in ((K.ST_NEW_ROW, K.ST_NEW_OWNER),
                                          (K.ST_CUR_ROW, K.ST_CUR_OWNER))):
                return -1
        return node

    @staticmethod
    def _squares_after(view, action):
        """The own kingdom's squares after `action` (changed only by a placement)."""
        bits, bbox, st = view.arrays
        size = st[K.ST_SIZE]
        if not 0 <= action < K.DISCARD:
            return view.square_array(view.player)
        b, x = bits.copy(), bbox.copy()
        K.place(b, x, view.player, size, st[K.ST_CUR_ROW + st[K.ST_SLOT]], action)
        return square_array(b, x, view.player, size)

    def act(self, view):
        legal = view.legal_actions()
        if len(legal) == 1:
            self._expect = None
            return legal[0]
        bits, bbox, st = view.arrays
        if self.endgame and EG.solvable(st):
            self._expect = None
            self.last_iterations = 0
            place, claim, _ = EG.solve(bits, bbox, st)
            return place if place >= 0 else claim
        self._root(view)
        seed = int(rand_u64(self._rng)) >> 1  # an int64 for the kernel
        opponents = self.policy if self.opponents < 0 else self.opponents

        def run(start, count, forced=-1):
            done = 0
            while done < count:  # in chunks, so that the tree can grow in between
                if self._ncount[0] > len(self._ti) // 2:
                    self._grow(2 * len(self._ti))
                n = min(_CHUNK, count - done)
                SK.mcts_run(bits, bbox, st, view.player, self._ti, self._tf, self._ncount, n,
                            self.c, self.bias, self.widen, self.policy, opponents, self._hw,
                            self._fb, self.measure, seed, self._net, self._evaluation,
                            self.net_share, self.depth, forced)
                done += n

        budget = time_budget(self.time, view)
        if self.root:
            best_node = self._halving(view, legal, run, budget)
        else:
            self.last_iterations = run_budget(run, self.iterations, budget, 32)
            best_node = self._most_visited(legal, self._children())
        if best_node < 0:
            return legal[0]
        best = int(self._ti[best_node, SK.TI_ACTION])
        self._expect = (best, self._squares_after(view, best), best_node)
        return best

    def _children(self):
        """The root's children (a kept claim node also has children for other deals' rows)."""
        out = []
        ch = self._ti[0, SK.TI_FIRST]
        while ch >= 0:
            out.append(int(ch))
            ch = self._ti[ch, SK.TI_NEXT]
        return out

    def _most_visited(self, legal, children):
        """The legal root child with the most visits (then the best mean), -1 when none is."""
        best, best_key = -1, None
        for ch in children:
            n = self._ti[ch, SK.TI_VISITS]
            key = (n, self._tf[ch, SK.TF_VALUE] / max(n, 1))
            if self._ti[ch, SK.TI_ACTION] in legal and (best_key is None or key > best_key):
                best, best_key = ch, key
        return best

    def _arms(self, view, legal):
        """The root actions Sequential Halving compares: at a place decision the placements of the
        heuristic's root_k best whole-turn moves (its standalone weights; all when root_k is 0), at
        a claim decision every legal claim."""
        if view.phase != "place" or self.root_k <= 0:
            return list(legal)
        bits, bbox, st = view.arrays
        places, claims = self._combos[0], self._combos[1]
        n = HK.heuristic_combos(bits, bbox, st, places, claims, self._combos[2], *self._work)
        values = self._combos[2][:n] @ self._arm_weights
        arms = []
        for i in np.argsort(-values, kind="stable"):
            if int(places[i]) not in arms:
                arms.append(int(places[i]))
                if len(arms) == self.root_k:
                    break
        return arms

    def _halving(self, view, legal, run, budget):
        """Sequential Halving over the root's arms (`_arms`): rounds of equal budgets, each split
        equally between the arms left, the better half (by mean result) kept after each round; the
        UCT tree below each arm grows as usual. Returns the node of the arm left."""
        arms = self._arms(view, legal)
        rounds = max(1, math.ceil(math.log2(len(arms))))
        done = 0
        for _ in range(rounds):
            share = None if budget is None else budget / rounds / len(arms)
            count = max(1, self.iterations // rounds // len(arms)) if budget is None else None
            for a in arms:
                done += run_budget(lambda start, n, a=a: run(start, n, a), count, share, 8)
            nodes = {int(self._ti[ch, SK.TI_ACTION]): ch for ch in self._children()}
            arms.sort(key=lambda a: -self._tf[nodes[a], SK.TF_VALUE]
                      / max(1, self._ti[nodes[a], SK.TI_VISITS]))
            arms = arms[:max(1, (len(arms) + 1) // 2)]
        self.last_iterations = done
        return {int(self._ti[ch, SK.TI_ACTION]): ch for ch in self._children()}[arms[0]]
