"""Reading a bot module's bots without running it (what --sandbox does in the harness)."""

import pytest

from kdtourney.bots.registry import BotRegistry
from kdtourney.bots.source_scan import bots_in_source

MODULE = '''
import sys
sys.stdin.read()  # would block a harness that ran it

class Deep(Bot):
    """Searches deep. Second line."""
    name = "deep"

    def __init__(self, depth=2, width: float = 0.5, *, greedy=True, book="none"):
        pass

class Plain(Base):
    name: str = "plain"

class Helper:
    name = "not-a-bot-no-base"

class Nameless(Bot):
    pass
'''


def test_bots_are_read_from_the_source_without_running_it():
    assert bots_in_source(MODULE, "m.py") == [
        ("deep", "Searches deep. Second line.", {"depth": 2, "width": 0.5, "greedy": True,
                                                 "book": "none"}),
        ("plain", "", {})]


@pytest.mark.parametrize("init, error", [
    ("def __init__(self, depth):", "every parameter needs a default; depth has none"),
    ("def __init__(self, depth=2 ** 4):", "the default of depth is not a literal")])
def test_what_cannot_be_read_is_an_error(init, error):
    with pytest.raises(ValueError, match=error):
        bots_in_source(f"class B(Bot):\n    name = 'b'\n    {init}\n        pass\n", "m.py")


def test_a_registry_that_does_not_run_modules_lists_their_bots(tmp_path):
    (tmp_path / "deep.py").write_text(MODULE)
    registry = BotRegistry([tmp_path], env=False, cwd=False, entry_points=False,
                           run_modules=False)
    assert registry.bots["deep"].cls is None and registry.bots["deep"].parameters["depth"] == 2
    assert registry.resolve("deep:depth=3").kwargs == {"depth": 3}
    with pytest.raises(ValueError, match="its module was read, not run"):
        registry.create("deep")
