"""KDTP/1 on the wire and on the bot side (`serve`): the state a bot gets rebuilds the view it would
get in-process, and a served bot answers as it would in-process."""

import io
import json
import random

import pytest

from kdtourney.bots.clock import TimeControl
from kdtourney.engine import CLAIM_BASE, DISCARD, Game, Rules, decode_placement, encode_placement
from kdtourney.external import kdtp
from kdtourney.registry import BotRegistry
from kdtourney.registry.serve import serve


@pytest.fixture(scope="module")
def registry():
    return BotRegistry(env=False, cwd=False, entry_points=False)


def positions(rules, seed):
    """Every decision of a random game: (game, view)."""
    game = Game(rules, seed)
    rnd = random.Random(seed)
    while not game.is_over:
        yield game, game.view(game.current_player)
        game.apply(rnd.choice(game.legal_actions()))


def act_message(view, time_left=None):
    return kdtp.decode(kdtp.act_line(view, view.legal_actions(), time_left))


@pytest.mark.parametrize("rules", [Rules(2), Rules(3, three_player="bga"), Rules(4, harmony=True),
                                   Rules(2, variant="duel", middle_kingdom=True)], ids=str)
def test_the_state_of_an_act_rebuilds_the_view(rules):
    for game, view in positions(rules, 3):
        message = act_message(view)
        other = kdtp.view_of(message, rules)
        assert other.legal_actions() == view.legal_actions()
        assert [other.kingdom(p) for p in range(rules.players)] == \
            [view.kingdom(p) for p in range(rules.players)]
        assert (other.current_row, other.placed, other.new_row, other.first_order, other.round,
                other.phase, other.scores(), other.unseen()) == \
            (view.current_row, view.placed, view.new_row, view.first_order, view.round,
             view.phase, view.scores(), view.unseen())
        assert [other.discards(p) for p in range(rules.players)] == \
            [game.discards(p) for p in range(rules.players)]
        a, b = view.determinize(4), other.determinize(4)
        while not a.is_over:
            a.apply(a.legal_actions()[-1])
            b.apply(b.legal_actions()[-1])
        assert a.scores() == b.scores()


def test_what_an_act_says():
    game = Game(Rules(4), 7)
    while game.round < 2 or game.phase != "place":
        game.apply(game.legal_actions()[0])
    view = game.view(game.current_player)
    message = act_message(view, time_left=0.25)
    state = message["state"]
    assert (message["type"], message["seat"], message["phase"], message["round"],
            message["time_left_s"]) == ("act", view.player, "place", 2, 0.25)
    assert kdtp.view_of(message, view.rules).time_left == 0.25  # a served bot sees its time
    # castle and one or two dominoes (round 1 placed, round 2 placing) in every kingdom
    assert all([0, 0, "C", 0] in k and len(k) in (3, 5) for k in state["kingdoms"])
    assert state["scores"] == view.scores() and state["to_place"] == view.domino_to_place
    assert [d["domino"] for d in state["current_row"]] == [d for d, _ in view.current_row]
    assert state["deck_left"] == 48 - 12 and state["unseen"] == sorted(state["unseen"])
    assert len(state["unseen"]) == 36 and set(state["unseen"]).isdisjoint(game.drawn())
    assert all(set(d) == {"domino", "seat"} for d in state["next_row"])
    assert sorted(state["first_order"]) == [0, 1, 2, 3]
    placements = [a["place"] for a in message["legal"]]
    assert placements == [[list(p.a), list(p.b)]
                          for p in map(decode_placement, view.legal_actions())]


def test_actions_on_the_wire():
    assert kdtp.action_to_wire(DISCARD) == {"discard": True}
    assert kdtp.action_to_wire(CLAIM_BASE + 31) == {"claim": 31}
    place = encode_placement(((0, 1), (1, 1)))
    assert kdtp.action_to_wire(place) == {"place": [[0, 1], [1, 1]]}
    # compared by canonical text: spacing and key order do not matter, types do
    assert kdtp.canonical(json.loads('{ "claim" : 31 }')) == kdtp.action_text(CLAIM_BASE + 31)
    assert kdtp.canonical({"discard": 1}) != kdtp.action_text(DISCARD)
    assert kdtp.canonical({"claim": 31.0}) != kdtp.action_text(CLAIM_BASE + 31)
    # what a served bot answers: its action, or whatever it returned, for the harness to refuse
    assert kdtp.action_message(place)["action"] == {"place": [[0, 1], [1, 1]]}
    assert kdtp.action_message(9999)["action"] == 9999
    assert kdtp.action_message(True)["action"] is True
    assert kdtp.action_message(None)["action"] is None
    # an answer written exactly as serve writes it is taken without parsing: it must mean the same
    lines = kdtp.answer_lines()
    assert len(lines) == 725  # every placement, the discard, every claim
    for line, action in lines.items():
        assert kdtp.encode(kdtp.action_message(action)) == line + b"\n"
        assert kdtp.canonical(kdtp.decode(line)["action"]) == kdtp.action_text(action)


@pytest.mark.parametrize("line, error", [
    (b"hello\n", "not JSON: 'hello'"),
    (b"[1, 2]\n", "not a KDTP message"),
    (b'{"action": 1}\n', "not a KDTP message"),
    (b'{"type": "action", "action": ' + b"[" * 100_000 + b"\n", "JSON nested too deeply"),
    (b'{"type": "hello", "name": "x", "version": NaN}\n', "not JSON"),  # Python's parser takes it
    (b'{"type": "action", "action": Infinity}\n', "not JSON"),
    (b'{"type": "hello", "name": "x\\ud800"}\n', "not Unicode text"),  # no store could hold it
])
def test_lines_that_are_not_messages(line, error):
    with pytest.raises(kdtp.ProtocolError, match=error):
        kdtp.decode(line)


def test_escapes_of_unicode_text_are_read():
    line = b'{"type": "hello", "name": "\\u00e9\\ud83d\\ude00"}'
    assert kdtp.decode(line)["name"] == "\u00e9\U0001f600"


def test_rules_of_a_game_message():
    rules = Rules(3, three_player="bga", harmony=True, tiebreak="territory")
    clock = TimeControl(move_s=0.5, bank_s=10, increment_s=0.1, first_move_s=1)
    message = kdtp.game_message(4, 1, rules, 99, {"depth": 3}, clock)
    assert kdtp.decode(kdtp.encode(message)) == message
    assert (message["kings"], message["size"], message["time"], message["options"]) == \
        (1, 5, {"move_s": 0.5, "bank_s": 10.0, "increment_s": 0.1, "first_move_s": 1.0},
         {"depth": 3})
    assert kdtp.game_message(4, 1, rules, 99, {}, None)["time"] == {
        "move_s": None, "bank_s": None, "increment_s": None, "first_move_s": None}
    assert message["dominoes"][47] == [48, "W", 0, "M", 3] and len(message["dominoes"]) == 48
    assert kdtp.rules_of(message) == rules
    with pytest.raises(kdtp.ProtocolError, match="players must be 2, 3 or 4"):
        kdtp.rules_of(dict(message, players=5))
    with pytest.raises(kdtp.ProtocolError, match="not the 48 dominoes"):
        kdtp.rules_of(dict(message, dominoes=message["dominoes"][::-1]))


def exchange(registry, spec, messages):
    """Run `serve` on these messages; (exit status, answers, stderr text)."""
    stdin = io.BytesIO(b"".join(kdtp.encode(m) for m in messages))
    stdout, stderr = io.BytesIO(), io.StringIO()
    code = serve(registry, spec, stdin, stdout, stderr)
    return code, [json.loads(line) for line in stdout.getvalue().splitlines()], stderr.getvalue()


@pytest.mark.parametrize("spec", ["greedy", "mcts:iterations=30", "random"])
def test_a_served_bot_answers_as_it_would_in_process(registry, spec):
    rules = Rules(2, harmony=True)
    game, seed, seat = Game(rules, 21), 1234, 1
    bot = registry.create(spec)
    bot.setup(seat, rules, seed)
    messages = [kdtp.hello(), kdtp.game_message(0, seat, rules, seed, {}, None)]
    expected = []
    while not game.is_over:
        if game.current_player == seat:
            view = game.view(seat)
            messages.append(act_message(view))
            action = bot.act(view)
            expected.append(kdtp.action_to_wire(action))
        else:
            action = game.legal_actions()[len(game.legal_actions()) // 2]
        game.apply(action)
    messages += [kdtp.result_message(game.scores(), game.ranking()), kdtp.quit_message()]
    code, answers, err = exchange(registry, spec, messages)
    assert code == 0, err
    assert answers[0] == {"type": "hello", "name": registry.resolve(spec).spec,
                          "version": answers[0]["version"], "author": "kdtourney serve"}
    assert [a["action"] for a in answers[1:]] == expected


def test_serve_takes_the_game_options_over_its_parameters(registry):
    rules = Rules(2)
    view = Game(rules, 5).view(Game(rules, 5).current_player)
    game = kdtp.game_message(0, view.player, rules, 1, {"iterations": 10}, None)
    code, answers, err = exchange(registry, "mcts:iterations=1000000",
                                  [kdtp.hello(), game, act_message(view)])
    assert code == 0 and len(answers) == 2  # a million iterations would not have answered yet
    bad = dict(game, options={"iterations": "many"})
    code, _, err = exchange(registry, "mcts", [kdtp.hello(), bad])
    assert code == 2 and "Error: the game's options: mcts: parameter iterations expects an " \
                          "integer" in err


def test_serve_without_first_order_guesses_the_rest_of_the_first_picks(registry):
    rules = Rules(4)
    game = Game(rules, 8)
    game.apply(game.legal_actions()[0])
    view = game.view(game.current_player)
    message = act_message(view)
    del message["state"]["first_order"]  # another harness speaks plain KDTP/1
    other = kdtp.view_of(message, rules)
    assert other.first_order[:2] == view.first_order[:2] and other.legal_actions() == \
        view.legal_actions()


def test_serve_reports_what_it_cannot_play(registry):
    rules = Rules(2)
    view = Game(rules, 5).view(Game(rules, 5).current_player)
    game = kdtp.game_message(0, view.player, rules, 1, {}, None)
    code, _, err = exchange(registry, "greedy", [dict(kdtp.hello(), version=2)])
    assert code == 2 and "this bot speaks kdtp/1, the harness kdtp/2" in err
    act = act_message(view)
    code, _, err = exchange(registry, "greedy", [kdtp.hello(), act])
    assert code == 2 and "act before game" in err
    act["legal"] = act["legal"][:1]
    code, _, err = exchange(registry, "greedy", [kdtp.hello(), game, act])
    assert code == 2 and "the act lists 1 legal actions, its state has 4" in err
    broken = act_message(view)
    broken["state"]["kingdoms"] = broken["state"]["kingdoms"][:1]
    code, _, err = exchange(registry, "greedy", [kdtp.hello(), game, broken])
    assert code == 2 and "an act whose state kdtourney cannot read" in err


def test_a_served_bot_that_raises_ends_with_its_traceback(tmp_path):
    (tmp_path / "boom.py").write_text(
        "from kdtourney.bots import Bot\n\n"
        "class Boom(Bot):\n    name = 'boom'\n\n"
        "    def act(self, view):\n        raise RuntimeError('no idea what to do')\n")
    registry = BotRegistry([tmp_path], env=False, cwd=False, entry_points=False)
    rules = Rules(2)
    view = Game(rules, 5).view(Game(rules, 5).current_player)
    code, answers, err = exchange(registry, "boom", [
        kdtp.hello(), kdtp.game_message(0, view.player, rules, 1, {}, None), act_message(view)])
    assert code == 1 and len(answers) == 1
    assert err.rstrip().endswith("RuntimeError: no idea what to do") and "boom.py" in err
