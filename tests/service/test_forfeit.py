"""The forfeit policy both backends follow when a worker dies or hangs in a game."""

from kdtourney.registry import BotRegistry
from kdtourney.service.forfeit import DONE, FAIL, FAILED, REPLAY, ForfeitPolicy, failed_rows
from kdtourney.tournament.definition import prepare


def policy(players=2):
    registry = BotRegistry(env=False, cwd=False, entry_points=False)
    t = prepare(registry, bots="random,greedy", players=str(players), games=players, seed=1)
    specs = t.plan().games
    return ForfeitPolicy(specs, t.entrants), specs, t


def test_the_second_loss_in_a_bot_call_makes_that_bot_forfeit():
    p, specs, t = policy()
    culprit = t.entrants[specs[1].seats[0]]
    assert p.lost(1, 0, 7, "died (exit code 3)") == (REPLAY, "playing it again")
    assert p.forced(1) == {}  # the first loss blames no one
    assert p.lost(1, 0, 7, "died") == (REPLAY, f"{culprit} (seat 1) forfeits it")
    assert p.forced(1) == {0: (7, "crash", "the worker died during this bot's call 7 "
                                           "(2 losses of this game)")}
    # a replay from before the forfeit dying at the same call is not a new loss
    assert p.lost(1, 0, 7, "died") == (DONE, f"{culprit} (seat 1) forfeits it already")
    assert p.losses[1] == 2
    assert p.lost(0, 1, 3, "hung", hung=True)[0] == REPLAY
    p.lost(0, 1, 3, "hung", hung=True)
    assert p.forced(0)[1][:2] == (3, "timeout")


def test_losses_outside_bot_calls_fail_the_game_after_players_plus_two():
    p, specs, t = policy(players=4)
    for _ in range(5):
        assert p.lost(2, -1, -1, "died") == (REPLAY, "playing it again")
    assert p.lost(2, -1, -1, "died") == (FAIL, "stored as a failed game")
    game, results, faults = failed_rows(specs[2], t.entrants, p.failed_message(2))
    assert game["status"] == "fault" and results == [] and len(game["moves"]) == 0
    assert [(f["seat"], f["entrant"], f["kind"]) for f in faults] == \
        [(s, t.entrants[e], FAILED) for s, e in enumerate(specs[2].seats)]
    assert "6 times" in faults[0]["message"]


def test_a_bot_forfeiting_at_one_call_that_hangs_at_an_earlier_one_forfeits_there():
    """A game played again need not take its course: a bot made to forfeit at the call where it
    hung its worker twice can hang the replay at an earlier call (a loaded machine stalls a
    decision past its limit). That loss is in its call: it forfeits there. Before, the loss
    counted as no one's, and the game was stored as failed after players + 2 losses, the hang
    inside the bot's decision attributed to no seat."""
    p, specs, t = policy()
    culprit = t.entrants[specs[1].seats[0]]
    for _ in range(2):
        p.lost(1, 0, 7, "hung", hung=True)
    for call in (5, 4, 3, 2):
        assert p.lost(1, 0, call, "hung", hung=True) == (REPLAY, f"{culprit} (seat 1) forfeits it")
        assert p.forced(1)[0][:2] == (call, "timeout")
    # a copy from before the forfeit, at that call or a later one, is no new loss
    assert p.lost(1, 0, 7, "hung", hung=True)[0] == DONE and p.losses[1] == 6
