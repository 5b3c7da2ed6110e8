"""The schedule: blocks of seat rotations, balanced formats, seeds from indexes only."""

import collections
import itertools

import pytest

from kdtourney.tournament import schedule
from kdtourney.tournament.schedule import (
    GAUNTLET,
    LINEUP,
    ROUND_ROBIN,
    ScheduleError,
    bot_seed,
    compositions,
    deal_seed,
    plan,
    rotations,
)


def seat_counts(p):
    """{(entrant, n_players, seat): games} over a plan."""
    counts = collections.Counter()
    for g in p.games:
        for seat, e in enumerate(g.seats):
            counts[(e, g.n_players, seat)] += 1
    return counts


def assert_seat_balanced(p):
    """Each entrant sits in each seat equally often, per table size and per block."""
    counts = seat_counts(p)
    for (e, n, _), _ in counts.items():
        per_seat = {counts[(e, n, s)] for s in range(n)}
        assert len(per_seat) == 1, (e, n, [counts[(e, n, s)] for s in range(n)])
    by_block = collections.defaultdict(list)
    for g in p.games:
        by_block[g.block].append(g)
    for games in by_block.values():
        n = games[0].n_players
        assert len(games) == n and [g.arrangement for g in games] == list(range(n))
        assert len({g.deal_seeds for g in games}) == 1  # one deal per block
        for seat in range(n):
            assert (collections.Counter(g.seats[seat] for g in games)
                    == collections.Counter(games[0].seats))


def test_rotations_put_everyone_in_every_seat():
    assert rotations((0, 1)) == [(0, 1), (1, 0)]
    assert rotations((0, 1, 2, 3)) == [(0, 1, 2, 3), (3, 0, 1, 2), (2, 3, 0, 1), (1, 2, 3, 0)]


def test_compositions_when_fewer_entrants_than_seats():
    assert compositions(ROUND_ROBIN, 2, 4) == [(0, 0, 0, 1), (0, 0, 1, 1), (0, 1, 1, 1)]
    assert compositions(ROUND_ROBIN, 2, 3) == [(0, 0, 1), (0, 1, 1)]
    assert compositions(ROUND_ROBIN, 3, 4) == [(0, 0, 1, 2), (0, 1, 1, 2), (0, 1, 2, 2)]
    assert compositions(ROUND_ROBIN, 4, 2) == list(itertools.combinations(range(4), 2))


@pytest.mark.parametrize("entrants,players", [(2, (2,)), (3, (2,)), (5, (2,)), (2, (3,)), (2, (4,)),
                                              (3, (4,)), (4, (4,)), (5, (3,)), (6, (4,)),
                                              (3, (2, 4)), (2, (2, 3, 4))])
def test_round_robin_balance_over_a_cycle(entrants, players):
    cycle = plan(ROUND_ROBIN, entrants, players, 1, seed=1).cycle
    games_per_cycle = sum(players[b % len(players)] for b in range(cycle))
    p = plan(ROUND_ROBIN, entrants, players, 2 * games_per_cycle, seed=1)
    assert p.blocks == 2 * cycle and len(p) == 2 * games_per_cycle
    assert_seat_balanced(p)
    counts = seat_counts(p)
    for n in players:  # every entrant plays as many seats as any other, at each table size
        per_entrant = {sum(counts[(e, n, s)] for s in range(n)) for e in range(entrants)}
        assert len(per_entrant) == 1
    met = {frozenset(pair) for g in p.games for pair in itertools.combinations(set(g.seats), 2)}
    assert met == {frozenset(pair) for pair in itertools.combinations(range(entrants), 2)}


@pytest.mark.parametrize("entrants,players", [(2, 2), (4, 2), (2, 4), (3, 4), (4, 4), (6, 3)])
def test_gauntlet_candidate_once_per_table_and_balanced(entrants, players):
    cycle = plan(GAUNTLET, entrants, (players,), 1, seed=1, candidate=0).cycle
    p = plan(GAUNTLET, entrants, (players,), cycle * players, seed=1, candidate=0)
    assert_seat_balanced(p)
    assert all(g.seats.count(0) == 1 for g in p.games)
    counts = seat_counts(p)
    opponents = {sum(counts[(e, players, s)] for s in range(players)) for e in range(1, entrants)}
    assert len(opponents) == 1  # the other seats cycle evenly over the opponents
    met = {e for g in p.games for e in g.seats}
    assert met == set(range(entrants))


def test_lineup_is_fixed_and_rotated():
    p = plan(LINEUP, 2, (4,), 8, seed=3, lineup=(0, 1, 1, 1))
    assert_seat_balanced(p)
    assert all(sorted(g.seats) == [0, 1, 1, 1] for g in p.games)
    with pytest.raises(ScheduleError):
        plan(LINEUP, 2, (3,), 8, seed=3, lineup=(0, 1, 1, 1))


def test_games_round_up_to_whole_blocks_and_mixed_sizes_alternate():
    p = plan(ROUND_ROBIN, 2, (2, 4), 7, seed=0)
    assert [g.n_players for g in p.games] == [2, 2, 4, 4, 4, 4, 2, 2]
    assert len(p) == 8 and p.blocks == 3
    assert p.cycle == 6 and p.cycle_games == 18 and not p.balanced  # AAAB, AABB, ABBB at 4
    assert plan(ROUND_ROBIN, 2, (2, 4), 18, seed=0).balanced
    assert [g.game for g in p.games] == list(range(8))


def test_seeds_depend_on_seed_and_indexes_only():
    a = plan(ROUND_ROBIN, 3, (2, 4), 30, seed=11)
    b = plan(ROUND_ROBIN, 3, (2, 4), 60, seed=11)
    assert a.games == b.games[:len(a.games)]  # a longer tournament starts with the same games
    c = plan(ROUND_ROBIN, 3, (2, 4), 30, seed=12)
    assert all(x.deal_seeds != y.deal_seeds for x, y in zip(a.games, c.games))
    g = a.games[5]
    assert g.deal_seeds == (deal_seed(11, g.block),)
    assert g.bot_seeds[1] == (bot_seed(11, 5, 1),)
    assert len({x.deal_seeds for x in a.games}) == a.blocks
    assert all(0 <= s < 2**63 for x in a.games for s in x.deal_seeds)
    assert all(0 <= s < 2**32 for x in a.games for seat in x.bot_seeds for s in seat)


def test_dynasty_has_three_deals_per_block():
    p = plan(ROUND_ROBIN, 2, (2,), 4, seed=5, dynasty=True)
    assert all(len(g.deal_seeds) == 3 and len(set(g.deal_seeds)) == 3 for g in p.games)
    assert all(len(s) == 3 for g in p.games for s in g.bot_seeds)
    assert p.games[0].deal_seeds == p.games[1].deal_seeds != p.games[2].deal_seeds


def test_impossible_formats():
    with pytest.raises(ScheduleError, match="at least two"):
        compositions(ROUND_ROBIN, 1, 2)
    with pytest.raises(ScheduleError, match="opponent"):
        compositions(GAUNTLET, 1, 2, candidate=0)
    with pytest.raises(ScheduleError):
        plan(ROUND_ROBIN, 2, (2,), 0, seed=1)
    assert schedule.FORMATS == (ROUND_ROBIN, GAUNTLET, LINEUP)
