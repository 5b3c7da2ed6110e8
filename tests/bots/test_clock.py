"""Game clocks: the time control's parts and one seat's clock through a game (no timing here)."""

import pytest

from kdtourney.bots.clock import TIME, TIMEOUT, SeatClock, TimeControl, parse_time_control


def test_parse_time_control():
    assert parse_time_control("10+0.1") == (10.0, 0.1)
    assert parse_time_control(" 60 ") == (60.0, 0.0)
    assert parse_time_control(".5+0") == (0.5, 0.0)
    for bad in ("", "ten", "10+", "+1", "0+1", "10+0.1+2", "-3"):
        with pytest.raises(ValueError, match="--time-control"):
            parse_time_control(bad)


def test_a_time_control_checks_its_parts():
    with pytest.raises(ValueError, match="increment needs a bank"):
        TimeControl(increment_s=0.1)
    with pytest.raises(ValueError, match="first-decision limit needs"):
        TimeControl(first_move_s=1.0)
    with pytest.raises(ValueError, match="move_s must be a positive"):
        TimeControl(move_s=0)
    assert TimeControl(bank_s=10, increment_s=0.1, first_move_s=1).wire() == {
        "move_s": None, "bank_s": 10.0, "increment_s": 0.1, "first_move_s": 1.0}
    assert TimeControl().describe() == "no limit" and not TimeControl().limited
    assert TimeControl(0.5, 10, 0.1, 1).describe() == \
        "10+0.1 s a game, first decision 1 s, 0.5 s a decision"


def test_a_bank_is_charged_and_credited():
    clock = SeatClock(TimeControl(move_s=0.5, bank_s=1.0, increment_s=0.1))
    assert clock.allowed() == (0.5, TIMEOUT)  # the move limit binds while the bank is larger
    clock.charge(0.4)
    assert clock.allowed() == (0.5, TIMEOUT) and clock.bank == pytest.approx(0.7)
    clock.charge(0.45)
    assert clock.allowed() == (pytest.approx(0.35), TIME)  # now the bank binds
    assert clock.over(0.36) == TIME and clock.over(0.34) is None
    clock.charge(2.0)  # never below zero: then the increment
    assert clock.bank == pytest.approx(0.1)


def test_the_first_decision_is_outside_the_bank_and_the_margin_counts():
    clock = SeatClock(TimeControl(move_s=0.1, bank_s=2.0, first_move_s=1.0), margin=0.2)
    assert clock.allowed() == (1.0, TIMEOUT)
    assert clock.over(1.15) is None and clock.over(1.25) == TIMEOUT
    clock.charge(0.9)
    assert clock.bank == 2.0 and clock.allowed() == (0.1, TIMEOUT)
    assert SeatClock(None).allowed() == (None, TIMEOUT) and SeatClock(None).over(1e9) is None


def test_the_margin_is_one_per_game_and_what_a_decision_overdraws_comes_out_of_it():
    clock = SeatClock(TimeControl(bank_s=2.0, increment_s=0.05), margin=0.2)
    clock.charge(1.6)  # within its time: the margin is untouched
    assert clock.margin == 0.2 and clock.deadline() == pytest.approx(0.45 + 0.2)
    clock.charge(0.45 + 0.15)  # 0.15 s past its bank: out of the margin, not forgiven
    # the increment pays back what it can of it: the bank is empty, the margin not full
    assert clock.margin == pytest.approx(0.1) and clock.bank == pytest.approx(0.0)
    # what the bot took past its bank once, it cannot take again in this game
    assert clock.over(0.0 + 0.15) == TIME and clock.over(0.0 + 0.09) is None
    assert clock.deadline() == pytest.approx(0.1)
    # the bank pays the margin back before the bot gets time again
    clock.charge(0.0)
    assert clock.margin == pytest.approx(0.15) and clock.bank == pytest.approx(0.0)
    clock.charge(0.0)
    clock.charge(0.0)
    assert clock.margin == pytest.approx(0.2) and clock.bank == pytest.approx(0.05)


def test_the_margin_is_lent_never_given_whatever_the_increment():
    for control in (TimeControl(bank_s=2.0, increment_s=0.05),
                    TimeControl(bank_s=10, increment_s=1.0)):
        clock = SeatClock(control, margin=0.2)
        taken = decisions = 0
        while clock.over(clock.allowed()[0] + 0.15) is None:  # most of the margin, every time
            taken += clock.allowed()[0] + 0.15
            clock.charge(clock.allowed()[0] + 0.15)
            decisions += 1
        # at most half the margin is paid back a decision: it runs out within a few decisions,
        # having taken no more than its bank, its increments and one margin
        assert 1 <= decisions <= 3
        assert taken <= control.bank_s + decisions * control.increment_s + 0.2 + 1e-9


def test_a_move_limit_draws_on_the_same_margin():
    clock = SeatClock(TimeControl(move_s=0.05), margin=0.2)
    for _ in range(3):
        assert clock.over(0.05 + 0.06) is None
        clock.charge(0.05 + 0.06)
    assert clock.margin == pytest.approx(0.02) and clock.over(0.05 + 0.06) == TIMEOUT
    # a first-decision limit too
    clock = SeatClock(TimeControl(move_s=0.05, first_move_s=1.0), margin=0.2)
    clock.charge(1.15)
    assert clock.margin == pytest.approx(0.05) and clock.over(0.05 + 0.1) == TIMEOUT
    # a move limit pays nothing back, even with a bank behind it: the bank is not the limit
    clock = SeatClock(TimeControl(move_s=0.05, bank_s=10.0), margin=0.2)
    for _ in range(3):
        clock.charge(0.05 + 0.06)
    assert clock.margin == pytest.approx(0.02) and clock.bank == pytest.approx(10 - 3 * 0.11)
