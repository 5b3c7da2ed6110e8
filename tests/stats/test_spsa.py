"""SPSA's math (kdtourney.stats.spsa), without playing a game: schedules, defaults, integer
rounding, batches, and convergence on a simulated objective with a known optimum."""

import math

import numpy as np
import pytest

from kdtourney.errors import UserError
from kdtourney.stats import spsa
from kdtourney.stats.spsa import Param, Schedule


def param(**kw):
    d = dict(name="x", start=0.0, min=-1.0, max=1.0, c_end=0.1, r_end=0.02)
    d.update(kw)
    return Param(**d)


def test_schedules_end_at_c_end_and_r_end_with_openbench_constants():
    s = Schedule(500)
    p = param()
    assert s.big_a == 50 and s.alpha == 0.602 and s.gamma == 0.101
    assert s.c_k(p, 500) == pytest.approx(0.1)
    assert s.r_k(p, 500) == pytest.approx(0.02)
    assert s.c_k(p, 1) == pytest.approx(0.1 * 500 ** 0.101)
    k = np.arange(1, 501)
    assert np.all(np.diff(s.c_k(p, k)) < 0) and np.all(np.diff(s.a_k(p, k)) < 0)


def test_default_r_end_carries_a_steady_win_across_the_range():
    for iterations in (50, 2000):
        p = spsa.make_param("x", 1, 0, 4, integer=False, iterations=iterations)
        assert p.c_end == pytest.approx(0.2)  # a twentieth of the range
        s = Schedule(iterations)
        theta = [p.start]
        for k in range(1, iterations + 1):
            theta = [theta[0] + float(s.r_k(p, k) * s.c_k(p, k))]  # result +1, sign +1, unclipped
        assert theta[0] - p.start == pytest.approx(4.0)


@pytest.mark.parametrize("rule", spsa.RULES)
def test_integer_parameters_are_rounded_at_random_and_right_on_average(rule):
    p = param(name="n", start=3.3, min=0, max=10, c_end=0.4, integer=True)
    s = Schedule(100)
    plus, minus = [], []
    for k in range(1, 4001):
        signs, a, b = spsa.perturbed([p], [3.3], k, s, seed=7, rule=rule)
        assert a[0] == int(a[0]) and b[0] == int(b[0])
        plus.append(a[0] - signs[0] * float(s.c_k(p, k)))
        minus.append(b[0] + signs[0] * float(s.c_k(p, k)))
    assert np.mean(plus) == pytest.approx(3.3, abs=0.03)
    assert np.mean(minus) == pytest.approx(3.3, abs=0.03)


def shares(rule, c_end, start=3.3, iterations=2000):
    """The shares of iterations whose theta+ and theta- are the same integer, and whose theta+
    lies on the wrong side of theta- (against the iteration's sign)."""
    p = param(name="n", start=start, min=0, max=10, c_end=c_end, integer=True)
    s = Schedule(iterations)
    same = wrong = 0
    for k in range(1, iterations + 1):
        signs, a, b = spsa.perturbed([p], [start], k, s, seed=11, rule=rule)
        same += a[0] == b[0]
        wrong += (a[0] - b[0]) * signs[0] < 0
    return same / iterations, wrong / iterations


@pytest.mark.parametrize("start", [3.0, 3.3, 3.5])
def test_theta_plus_and_theta_minus_are_rounded_with_one_draw(start):
    # c_k >= c_end = 0.5: theta+ and theta- lie 2 c_k >= 1 apart, so one draw never rounds them
    # to the same integer; rule 1 drew one number for each and seated two identical bots often
    assert shares(2, 0.5, start) == (0.0, 0.0)
    # closer than one apart they coincide in a share 1 - 2 c_k of the iterations, but theta+
    # never lies on the wrong side of theta-
    same, wrong = shares(2, 0.3, start)
    assert wrong == 0.0 and 0.2 < same < 0.45


def test_rule_1_seated_identical_bots_and_reversed_ones():
    assert shares(1, 0.5, 3.3)[0] > 0.1 and shares(1, 0.5, 3.0)[0] > 0.1
    assert shares(1, 0.3, 3.5)[1] > 0.02  # theta+ below theta- though the sign says above


def test_more_blocks_make_the_result_less_noisy_not_larger():
    assert spsa.result_of([1.0, 1.0]) == 2.0 == spsa.result_of([1.0])
    assert spsa.result_of([1.0, 0.5, math.nan]) == 1.0  # a block without a result counts nothing
    assert spsa.result_of([1.0, 1.0], rule=1) == 4.0     # rule 1 summed over the blocks
    # theta+ scoring 75% in every block: the same step with 1 block or 4
    p = param(c_end=0.1, r_end=0.05)
    s = Schedule(40)

    def end(blocks, rule):
        results = {k: spsa.result_of([0.75] * blocks, rule=rule) for k in range(1, 41)}
        its = spsa.replay([p], s, 5, 8, results, rule=rule)
        theta = spsa.final_theta([p], its)[0]
        assert -1 < theta < 1  # not clipped: the steps add up
        return theta - p.start

    assert end(4, 2) == pytest.approx(end(1, 2)) and abs(end(1, 2)) > 0.02
    assert end(4, 1) == pytest.approx(4 * end(1, 1))  # rule 1: B blocks moved B times as far


def test_an_unknown_rule_is_refused():
    with pytest.raises(spsa.SpsaError, match="SPSA rule 4 is unknown"):
        spsa.result_of([1.0], rule=4)
    assert issubclass(spsa.SpsaError, UserError)  # the command line's one-line error, exit 2


def test_perturbations_stay_in_range_and_steps_are_clipped():
    p = param(start=0.99, c_end=0.3)
    s = Schedule(10)
    _, plus, minus = spsa.perturbed([p], [0.99], 1, s, seed=1)
    assert -1 <= plus[0] <= 1 and -1 <= minus[0] <= 1
    assert spsa.step([p], [0.99], 1, [1.0], 2.0, Schedule(10)) == [1.0]


def test_result_is_counted_in_game_pairs():
    assert spsa.result_of([1.0]) == 2.0       # both games of a 2-player block won
    assert spsa.result_of([0.5, 0.25]) == -0.5
    assert spsa.result_of([math.nan]) == 0.0  # a block without a result counts nothing


def test_a_batch_starts_from_one_theta_and_only_complete_batches_step():
    p = param()
    s = Schedule(10)
    its = spsa.replay([p], s, seed=3, batch=4, results={1: 2.0, 2: -2.0, 3: 0.0, 4: 2.0, 5: 2.0})
    assert [it.k for it in its] == list(range(1, 9))      # two batches: one done, one to play
    assert {it.theta for it in its[:4]} == {(0.0,)}       # the first batch from the start
    assert all(it.after is not None for it in its[:4])
    assert {it.theta for it in its[4:]} == {its[3].after}  # the second from the first's end
    assert all(it.after is None for it in its[4:])        # 6, 7 and 8 missing: no step yet
    assert its[4].result == 2.0
    # the steps of a batch apply in iteration order, each with its own gain and sign
    theta = [0.0]
    for it, r in zip(its[:4], (2.0, -2.0, 0.0, 2.0)):
        theta = spsa.step([p], theta, it.k, it.signs, r, s)
    assert list(its[3].after) == pytest.approx(theta)


def test_bad_parameters_are_refused_in_one_line():
    for args, message in [((5, 10, 1), "min must be less than max"),
                          ((20, 0, 10), "start 20 is outside its range [0, 10]"),
                          (("a", 0, 1), "start must be a number, not 'a'"),
                          ((0.5, 0, 1, -1), "c_end must be positive"),
                          ((0.5, 0, 1, 2), "c_end must be positive and at most the range's "
                                           "width 1, not 2"),
                          ((0.5, 0, 1, 0.1, 0), "r_end must be positive"),
                          (("nan", 0, 1), "start must be a finite number")]:
        with pytest.raises(spsa.SpsaError, match="^--param x: " + message.replace("[", r"\[")):
            spsa.make_param("x", *args, integer=False, iterations=10)


def simulated_tune(params, optimum, iterations, seed, batch=8):
    """A tune on simulated 2-player blocks: theta+ wins each game with probability
    0.5 + (f(theta+) - f(theta-)) / 2, f = 1 - the scaled distance to `optimum`."""
    rng = np.random.default_rng(seed)
    s = Schedule(iterations)
    scale = np.array([p.max - p.min for p in params])

    def f(values):
        return 1 - np.abs((np.array(values) - optimum) / scale).sum()

    results = {}
    while True:
        its = spsa.replay(params, s, seed, batch, results)
        todo = [it for it in its if it.after is None]
        if not todo:
            return spsa.final_theta(params, its)
        for it in todo:
            p_win = 0.5 + (f(it.plus) - f(it.minus)) / 2
            wins = rng.random(2) < p_win
            results[it.k] = spsa.result_of([wins.mean()])


@pytest.mark.parametrize("seed", range(5))
def test_a_simulated_tune_ends_near_the_optimum_from_far_away(seed):
    # a weak signal (theta+ and theta- differ by 5% in win probability per parameter): c_end a
    # tenth of the range, r_end three times the default
    n = 400
    params = [spsa.make_param("x", -1.5, -2, 3, 0.5, 3 * spsa.default_r_end(-2, 3, 0.5, n),
                              integer=False, iterations=n),
              spsa.make_param("n", 18, 0, 20, 2, 3 * spsa.default_r_end(0, 20, 2, n),
                              integer=True, iterations=n)]
    x, n = simulated_tune(params, np.array([0.7, 6]), n, seed)
    assert abs(x - 0.7) < 0.5   # a tenth of the range
    assert abs(n - 6) < 2       # a tenth of the range
