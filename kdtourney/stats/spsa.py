"""SPSA, the mathematics of `kdtourney tune` (simultaneous perturbation stochastic approximation,
as fishtest and OpenBench run it): schedules, perturbations and steps, pure functions of the seed
and the results (the rule and its choices: docs/tune.md).

    make_param(name, start, lo, hi, ...)  a checked Param (SpsaError: one line for the user)
    Schedule(iterations)                  c_k, a_k and r_k of a parameter at iteration k
    perturbed(params, theta, k, ...)      iteration k's signs, theta+ and theta- as played
    result_of(block_scores)               an iteration's result R in game-pair units
    step(params, theta, k, signs, R, ...) theta after iteration k
    replay(params, schedule, seed, batch, results) -> [Iteration]
                                          the iterations the stored results allow, in batches
    final_theta(params, iterations)       theta after the last iteration with a result

SPSA_RULE is the version of these choices a new tune records; `rule=` replays an older one.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from kdtourney.errors import UserError

ALPHA = 0.602
GAMMA = 0.101
A_FRACTION = 0.1     # A = this fraction of the iterations
C_FRACTION = 1 / 20  # default c_end = this fraction of the range
SPSA_RULE = 3        # the version of the rule (docs/tune.md); 1: before it was recorded
RULES = (1, 2, 3)


class SpsaError(UserError):
    """A parameter or setting SPSA cannot use; the message is one line, meant for the user."""


@dataclass(frozen=True)
class Param:
    """One tuned parameter: name, start, range, perturbation and learning rate at the end, and
    whether it takes integer values (the bot's default is an int)."""

    name: str
    start: float
    min: float
    max: float
    c_end: float
    r_end: float
    integer: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Param:
        return cls(**d)

    def clip(self, x: float) -> float:
        return min(self.max, max(self.min, x))


@dataclass(frozen=True)
class Schedule:
    """The schedules' constants: iterations N, alpha, gamma, A (default N / 10). For a parameter
    with c_end and r_end: c_k = c / k^gamma with c = c_end N^gamma, a_k = a / (A + k)^alpha with
    a = r_end c_end^2 (A + N)^alpha, and r_k = a_k / c_k^2, which is r_end at k = N."""

    iterations: int
    alpha: float = ALPHA
    gamma: float = GAMMA
    A: float | None = None

    @property
    def big_a(self) -> float:
        return A_FRACTION * self.iterations if self.A is None else self.A

    def c_k(self, param: Param, k) -> np.ndarray | float:
        """Perturbation of `param` at iteration k (1-based; an array of k gives an array)."""
        c = param.c_end * self.iterations ** self.gamma
        return c / np.asarray(k, dtype=float) ** self.gamma

    def a_k(self, param: Param, k):
        a = param.r_end * param.c_end ** 2 * (self.big_a + self.iterations) ** self.alpha
        return a / (self.big_a + np.asarray(k, dtype=float)) ** self.alpha

    def r_k(self, param: Param, k):
        """Learning rate a_k / c_k^2 (r_end at the last iteration)."""
        return self.a_k(param, k) / self.c_k(param, k) ** 2

    def to_dict(self) -> dict:
        return dict(iterations=self.iterations, alpha=self.alpha, gamma=self.gamma, A=self.big_a)


def default_c_end(lo: float, hi: float) -> float:
    return C_FRACTION * (hi - lo)


def default_r_end(lo: float, hi: float, c_end: float, iterations: int) -> float:
    """The r_end with which a steady result of +1 per iteration moves a parameter by its whole
    range over `iterations` (the sum of r_k c_k is then max - min)."""
    unit = Param("x", 0.0, 0.0, 1.0, c_end, 1.0)
    k = np.arange(1, iterations + 1)
    s = Schedule(iterations)
    travel = float(np.sum(s.r_k(unit, k) * s.c_k(unit, k)))
    return (hi - lo) / travel if travel > 0 else 0.0


MAX_VALUE = 1e12  # a parameter's range ends (the steps' arithmetic stays finite)


def make_param(name: str, start, lo, hi, c_end=None, r_end=None, *, integer: bool,
               iterations: int) -> Param:
    """A checked Param; c_end defaults to a twentieth of the range, r_end to `default_r_end`.
    SpsaError (one line) for a value that is not a finite number or lies out of its range."""
    values = {}
    for what, v in (("start", start), ("min", lo), ("max", hi), ("c_end", c_end),
                    ("r_end", r_end)):
        if v is None:
            continue
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise SpsaError(f"--param {name}: {what} must be a number, not {v!r}") from None
        if not math.isfinite(x):
            raise SpsaError(f"--param {name}: {what} must be a finite number, not {v}")
        values[what] = x
    start, lo, hi = values["start"], values["min"], values["max"]
    if max(abs(lo), abs(hi)) > MAX_VALUE:
        raise SpsaError(f"--param {name}: min and max must lie within +-{MAX_VALUE:g}")
    if not lo < hi:
        raise SpsaError(f"--param {name}: min must be less than max, not min {lo:g} and max {hi:g}")
    if not lo <= start <= hi:
        raise SpsaError(f"--param {name}: start {start:g} is outside its range [{lo:g}, {hi:g}]")
    c_end = values.get("c_end", default_c_end(lo, hi))
    if not 0 < c_end <= hi - lo:
        raise SpsaError(f"--param {name}: c_end must be positive and at most the range's width "
                        f"{hi - lo:g}, not {c_end:g}")
    r_end = values.get("r_end")
    if r_end is None:
        r_end = default_r_end(lo, hi, c_end, iterations)
    if not r_end > 0:
        raise SpsaError(f"--param {name}: r_end must be positive, not {r_end:g}")
    return Param(name, start, lo, hi, c_end, r_end, bool(integer))


def draws(seed: int, k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Iteration k's signs (n values +-1) and the uniform numbers that round theta+ and theta-
    (2 x n; rules 2 and 3 round both with the first row), from SeedSequence([seed, 2, k])."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2, k]))
    signs = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return signs, rng.random((2, n))


def _played(param: Param, x: float, u: float) -> float:
    x = param.clip(x)
    return float(math.floor(x + u)) if param.integer else x


def _check(rule: int) -> None:
    if rule not in RULES:
        raise SpsaError(f"SPSA rule {rule} is unknown to this kdtourney (it knows "
                        f"{', '.join(map(str, RULES))}): update kdtourney")


def perturbed(params, theta, k: int, schedule: Schedule, seed: int, *, rule: int = SPSA_RULE):
    """Iteration k from `theta`: (signs, theta+, theta-), the two as played (clipped, integers
    rounded at random: under rule 2 with one draw for both, under rule 1 with one each)."""
    _check(rule)
    signs, u = draws(seed, k, len(params))
    u_minus = u[0] if rule >= 2 else u[1]
    plus, minus = [], []
    for i, p in enumerate(params):
        c = float(schedule.c_k(p, k))
        plus.append(_played(p, theta[i] + c * signs[i], u[0, i]))
        minus.append(_played(p, theta[i] - c * signs[i], u_minus[i]))
    return signs, plus, minus


def step(params, theta, k: int, signs, result: float, schedule: Schedule) -> list[float]:
    """theta after iteration k: each theta_i + r_k c_k R d_i, clipped to its range (R the
    result, `result_of`; d the signs)."""
    return [p.clip(theta[i] + float(schedule.r_k(p, k) * schedule.c_k(p, k)) * result * signs[i])
            for i, p in enumerate(params)]


def result_of(block_scores, *, rule: int = SPSA_RULE) -> float:
    """An iteration's result from theta+'s block scores (mean pairwise score against theta- per
    block, NaN for a block without a result): 2 (2 s - 1) averaged over the blocks with a result
    (rule 1: summed), 0 without any."""
    _check(rule)
    pairs = [2.0 * (2.0 * s - 1.0) for s in block_scores if not math.isnan(s)]
    if not pairs:
        return 0.0
    return float(sum(pairs) / len(pairs)) if rule >= 2 else float(sum(pairs))


@dataclass(frozen=True)
class Iteration:
    """What iteration k played and gave: the theta it started from, the signs, theta+ and theta-
    as played, the result (None while not all its games are stored) and theta after it."""

    k: int
    batch: int
    theta: tuple
    signs: tuple
    plus: tuple
    minus: tuple
    result: float | None = None
    after: tuple | None = None


def replay(params, schedule: Schedule, seed: int, batch: int, results, *,
           rule: int = SPSA_RULE) -> list[Iteration]:
    """The iterations as far as `results` (iteration k -> its result, for the iterations whose
    games are all stored) allow: every batch whose results are all known, plus the next batch
    (`after` None: it steps only once all its results are in), which is what to play next.
    `rule`: the rule the tune was made with (docs/tune.md)."""
    theta = [p.start for p in params]
    out: list[Iteration] = []
    n = schedule.iterations
    for first in range(1, n + 1, batch):
        ks = range(first, min(n, first + batch - 1) + 1)
        b = (first - 1) // batch
        complete = all(results.get(k) is not None for k in ks)
        new = list(theta)
        for k in ks:
            signs, plus, minus = perturbed(params, theta, k, schedule, seed, rule=rule)
            r = results.get(k)
            if complete:
                new = step(params, new, k, signs, r, schedule)
            out.append(Iteration(k, b, tuple(theta), tuple(signs), tuple(plus), tuple(minus),
                                 r, tuple(new) if complete else None))
        if not complete:
            break
        theta = new
    return out


def final_theta(params, iterations: list[Iteration]) -> list[float]:
    """theta after the last iteration with a result (the start before any)."""
    done = [it.after for it in iterations if it.after is not None]
    return list(done[-1]) if done else [p.start for p in params]


__all__ = ["Param", "Schedule", "Iteration", "SpsaError", "make_param", "perturbed", "step",
           "replay", "result_of", "final_theta", "draws", "default_c_end", "default_r_end",
           "ALPHA", "GAMMA", "SPSA_RULE", "RULES"]
