"""Tournament definitions from user input: entrant labels, formats, rules, differences."""

import pytest

from kdtourney.errors import UserError
from kdtourney.registry import BotRegistry
from kdtourney.store import StoreError
from kdtourney.tournament.definition import (
    ArenaError,
    Tournament,
    default_name,
    differences,
    parse_players,
    prepare,
)
from kdtourney.tournament.schedule import ScheduleError


@pytest.fixture(scope="module")
def registry():
    return BotRegistry(env=False, cwd=False, entry_points=False)


def test_round_robin_labels_and_canonical_specs(registry):
    t = prepare(registry, bots="random, greedy,random", games=10, seed=3)
    assert t.entrants == ("random#1", "greedy", "random#2")
    assert t.specs == ("random", "greedy", "random") and t.format == "round-robin"
    assert t.players == (2,) and t.seed == 3 and t.rules["tiebreak"] == "crowns"
    assert Tournament.from_dict(t.to_dict()) == t
    assert default_name(t, "20250101-120000") == "random-vs-greedy-20250101-120000"


def test_gauntlet_puts_the_candidate_first(registry):
    t = prepare(registry, bots="random,greedy", gauntlet="greedy", players="4", games=4, seed=1)
    assert t.entrants == ("greedy", "random") and t.candidate == 0 and t.format == "gauntlet"
    assert all(g.seats.count(0) == 1 for g in t.plan().games)
    assert t.describe() == "greedy against random (gauntlet, 4-player)"
    with pytest.raises(ArenaError, match="needs opponents"):
        prepare(registry, bots="greedy", gauntlet="greedy", games=4)


def test_lineup_is_one_entrant_per_spec(registry):
    t = prepare(registry, lineup="greedy,random,random,random", games=4, seed=1, harmony=True)
    assert t.entrants == ("greedy", "random") and t.lineup == (0, 1, 1, 1) and t.players == (4,)
    assert t.describe() == "greedy, random, random, random (lineup, 4-player, harmony)"


def test_fresh_seed_and_rules(registry):
    a = prepare(registry, bots="random,greedy", games=2)
    b = prepare(registry, bots="random,greedy", games=2)
    assert a.seed != b.seed and 0 <= a.seed < 2**32
    t = prepare(registry, bots="random,greedy", variant="duel", first_picks="abba", dynasty=True)
    assert t.rules_for(2).size == 7 and t.dynasty
    with pytest.raises(ArenaError, match="impossible rules: the duel variant"):
        prepare(registry, bots="random,greedy", variant="duel", players="2,4")
    with pytest.raises(ArenaError, match="--move-time-limit"):
        prepare(registry, bots="random,greedy", move_time_limit=-1)


def test_parse_players():
    assert parse_players("2, 4,2") == (2, 4) and parse_players([3]) == (3,)
    for bad in ("", "1", "2,x", "5"):
        with pytest.raises(ArenaError):
            parse_players(bad)


def test_differences_name_what_differs(registry):
    a = prepare(registry, bots="random,greedy", games=10, seed=3).to_dict()
    b = prepare(registry, bots="random,greedy", games=10, seed=4, harmony=True).to_dict()
    assert differences(a, a) == []
    assert differences(a, b) == ["rules.harmony: False (stored) vs True (now)",
                                 "seed: 3 (stored) vs 4 (now)"]


def test_bad_input_is_a_user_error():
    assert all(issubclass(e, UserError) and issubclass(e, ValueError)
               for e in (ArenaError, ScheduleError, StoreError))
    with pytest.raises(UserError, match="--players needs 2, 3 or 4"):
        parse_players("")
