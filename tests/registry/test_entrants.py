"""Entrants: specs parsed, canonical and checked against their bot's parameters and values."""

import pickle

import pytest
from registry_support import local, write_bot

from kdtourney.registry import Entrant, EntrantError, parse_entrant


@pytest.mark.parametrize("text, value", [
    ("3", 3), ("-2", -2), ("+7", 7), ("0.7", 0.7), ("2.", 2.0), (".5", 0.5), ("1e-3", 0.001),
    ("true", True), ("FALSE", False), ("True", True), ("greedy", "greedy"),
    ("player-greedy", "player-greedy"), ("inf", "inf"), ("1_000", "1_000"), ("a=b", "a=b"),
])
def test_parse_entrant_value_types(text, value):
    entrant = parse_entrant(f"bot:x={text}")
    assert entrant.kwargs == {"x": value} and type(entrant.kwargs["x"]) is type(value)


def test_canonical_spec_sorts_keys_and_identifies_entrants():
    a = parse_entrant("mcts:iterations=2000:c=0.7")
    b = parse_entrant(" mcts:c=0.70:iterations=2000 ")
    assert a.spec == b.spec == "mcts:c=0.7:iterations=2000" == str(a)
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != parse_entrant("mcts:iterations=2000:c=0.8") != parse_entrant("mcts")
    assert a.name == "mcts" and a.params == (("c", 0.7), ("iterations", 2000))
    assert a.kwargs == {"c": 0.7, "iterations": 2000}
    assert parse_entrant(a) is a and parse_entrant(a.spec) == a
    flags = parse_entrant("b:on=TRUE:off=false:word=x")
    assert flags.spec == "b:off=false:on=true:word=x" and parse_entrant(flags.spec) == flags
    assert Entrant("mce", {"time": 0.1}).spec == "mce:time=0.1"
    assert pickle.loads(pickle.dumps(a)) == a  # entrants travel to workers


@pytest.mark.parametrize("spec, message", [
    ("", "the bot name is missing"),
    (":c=1", "the bot name is missing"),
    ("mcts:c", "'c' is not key=value"),
    ("mcts:=1", "'=1' is not key=value"),
    ("mcts:c=", "'c=' is not key=value"),
    ("mcts::c=1", "'' is not key=value"),
    ("mcts:c=1:c=2", "parameter c given twice"),
    ("my bot", "bad bot name 'my bot'"),
    ("mcts:2c=1", "bad parameter name '2c'"),
])
def test_malformed_specs(spec, message):
    with pytest.raises(EntrantError, match=message) as err:
        parse_entrant(spec)
    assert isinstance(err.value, ValueError) and "\n" not in str(err.value)


def test_entrant_values_must_be_spec_values():
    with pytest.raises(EntrantError, match="cannot contain ':'"):
        Entrant("x", {"s": "a:b"})
    with pytest.raises(EntrantError, match="int, float, bool or str"):
        Entrant("x", {"s": None})


@pytest.fixture
def reg(tmp_path):
    write_bot(tmp_path / "b", "tmp.py", "tmp-bot", extra='''
        class Picky(Bot):
            name = "picky"

            def __init__(self, mode: str = "fast", budget=None):
                if mode not in ("fast", "slow"):
                    raise ValueError(f"mode must be fast or slow, not {mode!r}")
                self.mode, self.budget = mode, budget
        ''')
    return local([tmp_path / "b"])


def test_unknown_bot_lists_the_available_ones(reg):
    with pytest.raises(EntrantError, match=r"^unknown bot 'nope'; available: picky, random, "):
        reg.create("nope:x=1")


def test_unknown_parameter_lists_the_valid_ones_with_defaults(reg):
    with pytest.raises(EntrantError, match=r"^tmp-bot has no parameter 'deep'; its parameters: "
                                           r"depth=2, c=0.5, greedy=false, policy=random$"):
        reg.create("tmp-bot:deep=3")
    with pytest.raises(EntrantError, match="random has no parameter 'x'; it takes no parameters"):
        reg.create("random:x=1")


@pytest.mark.parametrize("spec, message", [
    ("tmp-bot:depth=2.5", "parameter depth expects an integer (default 2), not '2.5'"),
    ("tmp-bot:depth=true", "parameter depth expects an integer (default 2), not 'true'"),
    ("tmp-bot:c=fast", "parameter c expects a number (default 0.5), not 'fast'"),
    ("tmp-bot:greedy=1", "parameter greedy expects true or false (default false), not '1'"),
])
def test_values_of_the_wrong_type(reg, spec, message):
    with pytest.raises(EntrantError, match=r"^tmp-bot: " + message.replace("(", r"\(")
                       .replace(")", r"\)")):
        reg.create(spec)


def test_resolve_converts_to_the_types_of_the_defaults(reg):
    entrant = reg.resolve("tmp-bot:c=1:policy=3:depth=4")
    assert entrant.kwargs == {"c": 1.0, "policy": "3", "depth": 4}
    assert type(entrant.kwargs["c"]) is float and entrant.spec == "tmp-bot:c=1.0:depth=4:policy=3"
    assert reg.resolve("tmp-bot:c=1.0") == reg.resolve("tmp-bot:c=1")
    bot = reg.create(entrant)
    assert (bot.c, bot.policy, bot.depth) == (1.0, "3", 4)
    assert reg.create("picky:budget=0.5").budget == 0.5  # default None: taken as given
    assert reg.create("picky:budget=many").budget == "many"


def test_constructor_errors_become_entrant_errors(reg):
    with pytest.raises(EntrantError, match=r"^picky:mode=medium: mode must be fast or slow, not "
                                           r"'medium'$"):
        reg.create("picky:mode=medium")
    with pytest.raises(EntrantError, match=r"^picky:mode=medium: mode must be fast or slow"):
        reg.resolve("picky:mode=medium")  # before any game is played with it


def test_a_folder_bot_is_made_once_to_check_values_and_closed(tmp_path):
    log = tmp_path / "log"
    write_bot(tmp_path / "b", "touchy.py", "plain", extra=f'''
        class Touchy(Bot):
            name = "touchy"

            def __init__(self, level: int = 1):
                if level > 3:
                    raise RuntimeError("too high")
                with open({str(log)!r}, "a") as f:
                    f.write(f"made {{level}}\\n")

            def close(self):
                with open({str(log)!r}, "a") as f:
                    f.write("closed\\n")
        ''')
    reg = local([tmp_path / "b"])
    with pytest.raises(EntrantError,
                       match=r"^touchy:level=4: RuntimeError: too high \(line \d+\)$"):
        reg.resolve("touchy:level=4")
    assert reg.resolve("touchy:level=2").kwargs == {"level": 2}
    reg.resolve("touchy:level=2")  # checked once
    assert log.read_text() == "made 2\nclosed\n"
