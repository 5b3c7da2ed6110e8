"""The game loop: results agree with the engine, faults forfeit the game and the others finish."""

import numpy as np
import pytest

from kdtourney.bots import greedy, mcts
from kdtourney.bots.base import Bot
from kdtourney.bots.clock import TimeControl
from kdtourney.bots.greedy import time_budget
from kdtourney.bots.mcts import MCTSBot
from kdtourney.bots.random_bot import RandomBot
from kdtourney.engine import Game, Rules
from kdtourney.match import loop as match
from kdtourney.match.loop import play_match, rank_among


class First(Bot):
    name = "first"

    def act(self, view):
        return view.legal_actions()[0]


class Numpy(Bot):
    name = "numpy"

    def act(self, view):
        return np.int64(view.legal_actions()[-1])


class FakeTime:
    """The harness's clock (`kdtourney.match.loop.time`) in the tests of clocks: time passes only
    when a bot pauses, so a decision is charged exactly what its bot paused, on any machine."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


@pytest.fixture
def fake_time(monkeypatch):
    clock = FakeTime()
    monkeypatch.setattr(match, "time", clock)
    return clock


def pause(seconds):
    """A bot's work of `seconds`, on the harness's clock."""
    match.time.sleep(seconds)


def failing(kind, at=3):
    class Failing(Bot):
        name = kind

        def setup(self, seat, rules, seed):
            self.n = 0
            if kind == "setup":
                raise KeyError("no setup today")

        def act(self, view):
            self.n += 1
            legal = view.legal_actions()
            if self.n == at:
                if kind == "raise":
                    raise ZeroDivisionError("oops")
                if kind == "exit":
                    raise SystemExit(4)
                if kind == "illegal":
                    return 5000
                if kind == "bool":
                    return True
                if kind == "float":
                    return float(legal[0])
                if kind == "huge":
                    return 10**30
                if kind == "slow":
                    pause(0.05)
            return legal[0]
    return Failing


class RuleBender(RandomBot):
    """Changes every Rules object it is given (object.__setattr__ gets past frozen=True)."""

    name = "rule-bender"

    def setup(self, seat, rules, seed):
        super().setup(seat, rules, seed)
        object.__setattr__(rules, "tiebreak", "territory")

    def act(self, view):
        object.__setattr__(view.rules, "harmony", True)
        return super().act(view)


def test_a_bot_changing_its_rules_changes_nothing_of_the_match():
    rules = Rules(players=2)
    honest = play_match(rules, [1, 2, 3], [[5, 6, 7], [8, 9, 10]], [RandomBot, RandomBot])
    bent = play_match(rules, [1, 2, 3], [[5, 6, 7], [8, 9, 10]], [RuleBender, RandomBot])
    assert rules == Rules(players=2)
    assert [(s.score, s.rank) for s in bent.seats] == [(s.score, s.rank) for s in honest.seats]


def play(bots, players=2, seeds=(7,), **kw):
    rules = Rules(players=players)
    bot_seeds = [[100 + s + 10 * d for d in range(len(seeds))] for s in range(players)]
    return play_match(rules, list(seeds), bot_seeds, bots, **kw)


def test_a_clean_game_matches_the_engine():
    res = play([RandomBot, First, Numpy, RandomBot], players=4)
    assert res.status == "ok" and res.error is None and not res.faults
    game = Game.replay(Rules(players=4), 7, res.moves)
    assert game.is_over
    assert [s.score for s in res.seats] == game.scores()
    assert [s.rank for s in res.seats] == game.ranking()
    assert [s.discards for s in res.seats] == [game.discards(p) for p in range(4)]
    assert [s.largest_territory for s in res.seats] == \
        [game.score(p).largest_territory for p in range(4)]
    assert sum(s.win_share for s in res.seats) == pytest.approx(1.0)
    best = max(game.scores())
    for p, s in enumerate(res.seats):
        others = max(x for q, x in enumerate(game.scores()) if q != p)
        assert s.margin == s.score - others
        assert s.decisions == 24 and s.time_total >= s.time_max > 0 and not s.fault
    assert res.seats[int(np.argmin([s.rank for s in res.seats]))].score == best


def test_same_inputs_same_game():
    a = play([RandomBot, RandomBot])
    b = play([RandomBot, RandomBot])
    assert a.moves == b.moves and [s.score for s in a.seats] == [s.score for s in b.seats]


@pytest.mark.parametrize("kind,fault_kind", [("raise", "exception"), ("exit", "exception"),
                                             ("setup", "exception"), ("illegal", "illegal"),
                                             ("bool", "illegal"), ("float", "illegal"),
                                             ("huge", "illegal")])
def test_a_fault_forfeits_and_the_others_finish(kind, fault_kind):
    res = play([RandomBot, failing(kind), RandomBot, RandomBot], players=4)
    assert res.status == "fault"
    [fault] = res.faults
    assert fault.seat == 1 and fault.kind == fault_kind and fault.message
    seats = res.seats
    assert seats[1].fault and seats[1].rank == 4 and seats[1].win_share == 0
    assert sorted(s.rank for s in seats if not s.fault)[0] == 1
    assert sum(s.win_share for s in seats) == pytest.approx(1.0)
    game = Game.replay(Rules(players=4), 7, res.moves)  # a complete legal game
    assert game.is_over and [s.score for s in seats] == game.scores()
    # the others are ranked among themselves by the engine's ranking
    engine = game.ranking()
    others = [p for p in range(4) if p != 1]
    for p in others:
        assert seats[p].rank == 1 + sum(engine[q] < engine[p] for q in others)
    if kind == "raise":
        assert "ZeroDivisionError: oops" in fault.message and "test_loop.py" in fault.message
        assert seats[1].decisions == 3  # not asked again after its fault


def test_a_bot_that_cannot_be_made_forfeits():
    class BadInit(Bot):
        name = "badinit"

        def __init__(self):
            raise RuntimeError("cannot start")

    res = play([BadInit, First])
    assert res.faults[0].kind == "exception" and res.faults[0].call == 0
    assert res.seats[0].decisions == 0 and res.seats[0].rank == 2 and res.seats[1].win_share == 1


def test_move_time_limit(fake_time):
    res = play([failing("slow"), First], clock=TimeControl(move_s=0.02))
    [fault] = res.faults
    assert fault.kind == "timeout" and \
        "the limit: 0.020 s + 0.000 s left of its 0 s margin" in fault.message
    assert res.seats[0].time_max == pytest.approx(0.05) and res.seats[0].rank == 2
    assert not play([failing("slow"), First], clock=TimeControl(move_s=5)).faults
    # the margin is every seat's: within the limit plus the margin is in time
    assert not play([failing("slow"), First], clock=TimeControl(move_s=0.02), margin=1.0).faults


class Sleeper(Bot):
    """Sleeps `first` seconds on its first decision of a game, `each` on the others; notes the
    time it was given."""

    name = "sleeper"
    first, each = 0.0, 0.05

    def setup(self, seat, rules, seed):
        self.decisions, self.given = 0, []

    def act(self, view):
        self.given.append(view.time_left)
        pause(self.first if self.decisions == 0 else self.each)
        self.decisions += 1
        return view.legal_actions()[0]


def test_an_empty_bank_forfeits_with_fault_time(fake_time):
    res = play([Sleeper, First], clock=TimeControl(bank_s=0.2, increment_s=0.0))
    [fault] = res.faults
    assert fault.seat == 0 and fault.kind == "time" and "left of its bank" in fault.message
    # its first decision takes nothing, four more of 0.05 s empty the 0.2 s bank, the sixth is over
    assert res.seats[0].decisions == 6 and fault.call == 7
    # an increment covering each decision keeps the bank full: no forfeit in a whole game
    assert not play([Sleeper, First], clock=TimeControl(bank_s=0.2, increment_s=0.2)).faults


class Aimed(Bot):
    """Takes what the clock allows it plus three quarters of the 0.5 s margin, every decision."""

    name = "aimed"

    def act(self, view):
        pause(view.time_left + 0.375)
        return view.legal_actions()[0]


class Honest(Bot):
    """Spends 80% of what the clock allows it, as the built-in search bots do."""

    name = "honest"

    def act(self, view):
        pause(0.8 * view.time_left)
        return view.legal_actions()[0]


@pytest.mark.parametrize("clock, kind", [(TimeControl(bank_s=0.3, increment_s=0.05), "time"),
                                         (TimeControl(move_s=0.05), "timeout")])
def test_a_bot_aimed_at_the_margin_runs_out_of_time_within_a_game(clock, kind, fake_time):
    res = play([Aimed, First], clock=clock, margin=0.5)
    [fault] = res.faults
    # its first overdraw leaves it at most 0.175 s of margin with what the bank pays back; the
    # second is over (call 2 is its first decision: construction 0, setup 1)
    assert fault.seat == 0 and fault.kind == kind and fault.call == 3
    assert "left of its 0.5 s margin" in fault.message and res.seats[0].rank == 2


def test_an_honest_bot_spending_80_percent_of_its_time_never_forfeits(fake_time):
    res = play([Honest, First], clock=TimeControl(bank_s=0.3, increment_s=0.05))
    assert not res.faults and res.seats[0].decisions == 24


def test_the_first_decision_has_its_own_allowance(fake_time):
    class SlowStart(Sleeper):
        first, each = 0.3, 0.0

    clock = TimeControl(move_s=0.1, first_move_s=1.0)
    bots = []

    def make():
        bots.append(SlowStart())
        return bots[-1]
    assert not play([make, First], clock=clock).faults
    assert bots[0].given[0] == 1.0 and set(bots[0].given[1:]) == {0.1}
    [fault] = play([SlowStart, First], clock=TimeControl(move_s=0.1)).faults
    assert fault.kind == "timeout" and fault.call == 2  # construction 0, setup 1, first act 2
    # with a bank: the first decision does not draw on it
    bots.clear()
    assert not play([make, First], clock=TimeControl(bank_s=0.2, first_move_s=1.0)).faults
    assert bots[0].given[:2] == [1.0, 0.2]


def test_forced_fault_and_monitor():
    seen = []
    res = play([First, First], forced={1: (4, "crash", "worker died")},
               monitor=lambda seat, call, limit: seen.append((seat, call, limit)))
    [fault] = res.faults
    assert (fault.seat, fault.kind, fault.call, fault.message) == (1, "crash", 4, "worker died")
    assert (1, 4, None) not in seen and (1, 3, None) in seen and seen[-1] == (-1, -1, None)
    assert res.seats[1].decisions == 2  # calls 0 (make) and 1 (setup), then two act calls
    # under a clock the monitor learns what each decision may take before it forfeits anyway
    seen.clear()
    play([First, First], clock=TimeControl(bank_s=0.3), margin=0.2,
         monitor=lambda seat, call, limit: seen.append((seat, call, limit)))
    assert seen[:3] == [(0, 0, None), (1, 0, None), (0, 1, None)]  # make, make, setup
    assert (0, 2, pytest.approx(0.5)) in seen  # its first decision: its bank and its margin


def test_all_faulted_nobody_wins():
    res = play([failing("raise", 1), failing("illegal", 1)])
    assert [s.rank for s in res.seats] == [2, 2] and [s.win_share for s in res.seats] == [0, 0]


def test_dynasty_totals_three_deals():
    res = play([RandomBot, First], seeds=(1, 2, 3))
    assert len(res.moves) == 3
    scores = [0, 0]
    for seed, moves in zip((1, 2, 3), res.moves):
        game = Game.replay(Rules(players=2), seed, moves)
        assert game.is_over
        scores = [a + b for a, b in zip(scores, game.scores())]
    assert [s.score for s in res.seats] == scores
    assert res.seats[0].decisions == res.seats[1].decisions == 3 * 24


def test_rank_among():
    assert rank_among([3, 5, 5, 1], [False] * 4) == [3, 1, 1, 4]
    assert rank_among([3, 5, 5, 1], [False, True, False, False]) == [2, 4, 1, 3]
    assert rank_among([(10, 2), (10, 3)], [False, False]) == [2, 1]


def test_search_bots_on_a_time_budget_spend_within_the_bank(fake_time, monkeypatch):
    class View:
        time_left = 0.5
    assert time_budget(2.0, View()) == pytest.approx(0.4) and time_budget(0.1, View()) == 0.1
    assert time_budget(None, View()) is None and time_budget(2.0, object()) == 2.0
    # the search reads the harness's clock, on which an iteration takes 0.1 ms (a few times what
    # it takes at the start of a game): the first chunk, 32 iterations, may overshoot a bank
    # nearly empty by 3.2 ms, 24 decisions by less than the margin
    monkeypatch.setattr(greedy, "_time", fake_time)

    def costed(step, iterations, time, chunk0):
        def step_and_cost(start, count):
            step(start, count)
            fake_time.sleep(0.0001 * count)
        return greedy.run_budget(step_and_cost, iterations, time, chunk0)
    monkeypatch.setattr(mcts, "run_budget", costed)
    # 1 s a decision would empty a 0.5 s bank at once; the bot spends what the clock leaves it
    res = play([lambda: MCTSBot(time=1.0), First], clock=TimeControl(bank_s=0.5), margin=0.1)
    assert not res.faults and res.seats[0].time_total < 0.6
