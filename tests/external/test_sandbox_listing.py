"""--sandbox: the harness learns what a bot module defines by asking it inside a sandbox, so it
knows what Python runs (the last `name` and `__init__`, subclasses of PolicyBot and of built-ins,
the values a bot refuses), while the module sees nothing but its own files."""

import shutil
import textwrap

import pytest
from click.testing import CliRunner

from kdtourney import store
from kdtourney.cli import main
from kdtourney.external import Sandbox
from kdtourney.registry import BotRegistry, EntrantError, listing

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap (bwrap) is not installed: apt-get install "
                                       "bubblewrap")

KINDS = textwrap.dedent('''
    import sys

    from kdtourney.bots.greedy import GreedyBot
    from kdtourney.env.policy import PolicyBot

    print("a module may print while it is imported")


    class Renamed(GreedyBot):
        """Greedy, under the name it was given last."""
        name = "first-name"
        name = "last-name"


    class Policy(PolicyBot):
        """The first legal action, through a policy."""
        name = "policy"

        def __init__(self, depth=2):
            pass

        def __init__(self, depth=2, width=3):  # Python keeps this one
            if depth < 0:
                raise ValueError("depth must not be negative")

        def policy(self, observation, action_mask):
            return int(action_mask.argmax())


    class Fussy(GreedyBot):
        """Refuses its own defaults."""
        name = "fussy"

        def __init__(self, level=0):
            raise ValueError("give a level")


    class Helper(dict):  # a class with a base and a name, but no bot
        name = "not-a-bot"
''')

BROKEN = "import a_module_nobody_installed\n"

# reads its sibling's source wherever it can while it is listed, and says so in its name
SNOOP = textwrap.dedent('''
    from pathlib import Path

    from kdtourney.bots.base import Bot


    def sees_sibling():
        for folder in (Path(__file__).parent, Path({folder!r})):
            try:
                if "class Renamed" in (folder / "kinds.py").read_text():
                    return True
            except OSError:
                pass
        return False


    class Snoop(Bot):
        """Named after what it could read."""
        name = "saw-sibling" if sees_sibling() else "blind"

        def act(self, view):
            return view.legal_actions()[0]
''')


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("listing") / "bots"
    folder.mkdir()
    (folder / "kinds.py").write_text(KINDS)
    (folder / "broken.py").write_text(BROKEN)
    (folder / "snoop.py").write_text(SNOOP.format(folder=str(folder)))
    return folder


@pytest.fixture(scope="module")
def sandboxed(folder):
    return BotRegistry([folder], env=False, cwd=False, entry_points=False, sandbox=Sandbox())


def without_snoop(text):
    """The lines of `kdtourney bots` but the snoop's (its name differs), spacing aside."""
    return [" ".join(line.split()) for line in text.splitlines()
            if not any(word in line for word in ("snoop", "blind", "saw-sibling", "Named after"))]


@pytest.mark.process
@pytest.mark.sandbox
def test_a_module_is_listed_as_python_runs_it(folder, sandboxed):
    here = BotRegistry([folder], env=False, cwd=False, entry_points=False)
    assert without_snoop(listing(sandboxed)) == without_snoop(listing(here))
    mine = {name: info for name, info in sandboxed.bots.items() if info.origin != "built-in"}
    assert sorted(mine) == ["blind", "fussy", "last-name", "policy"]
    assert all(info.cls is None for info in mine.values())  # not run in this process
    assert mine["policy"].parameters == {"depth": 2, "width": 3}
    assert mine["policy"].description == "The first legal action, through a policy."
    assert mine["last-name"].parameters == {} and mine["fussy"].parameters == {"level": 0}


@pytest.mark.process
@pytest.mark.sandbox
def test_a_module_that_fails_at_import_is_broken_not_fatal(sandboxed):
    [broken] = sandboxed.broken
    assert broken.origin.endswith("broken.py")
    assert broken.error == ("ModuleNotFoundError: No module named 'a_module_nobody_installed' "
                            "(line 1)")
    with pytest.raises(EntrantError, match="broken.py failed to import: ModuleNotFoundError"):
        sandboxed.resolve("broken")


@pytest.mark.process
@pytest.mark.sandbox
def test_while_it_is_listed_a_module_cannot_read_a_siblings_source(folder, sandboxed):
    assert "blind" in sandboxed.bots and "saw-sibling" not in sandboxed.bots
    # run in this process it can, as the test shows
    assert "saw-sibling" in BotRegistry([folder], env=False, cwd=False, entry_points=False).bots


@pytest.mark.process
@pytest.mark.sandbox
def test_values_a_bot_refuses_are_errors_before_play(sandboxed):
    sandboxed.check(["policy:depth=3:width=1", "policy:depth=-1"])  # one sandbox for both
    assert sandboxed.resolve("policy:depth=3:width=1").spec == "policy:depth=3:width=1"
    with pytest.raises(EntrantError) as refused:
        sandboxed.resolve("policy:depth=-1")
    assert str(refused.value) == "policy:depth=-1: depth must not be negative"
    with pytest.raises(EntrantError) as refused:  # its defaults, checked with the listing
        sandboxed.resolve("fussy")
    assert str(refused.value) == "fussy: give a level"


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
def test_on_the_command_line_a_refused_value_is_one_error_line_and_nothing_is_played(folder,
                                                                                   tmp_path):
    result = CliRunner().invoke(main, ["run", "--sandbox", "--bots-dir", str(folder), "--bots",
                                       "policy:depth=-1,random", "--games", "2",
                                       "--out", str(tmp_path / "t")])
    assert result.exit_code == 2
    assert result.stderr == "Error: policy:depth=-1: depth must not be negative\n"
    assert not store.exists(tmp_path / "t")


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
def test_a_listing_late_under_load_is_asked_again_not_broken(tmp_path):
    """A module slow only the first time it is asked (as under a passing load: it sleeps until
    a moment past its first start-up timeout) is asked once more and listed, not broken."""
    import time

    until = time.time() + 10  # the first listing times out at 8 s; the second finds it past
    (tmp_path / "slow.py").write_text(
        f"import time\n\nfrom kdtourney.bots.greedy import GreedyBot\n\n"
        f"time.sleep(max(0.0, {until!r} - time.time()))\n\n\n"
        "class Slow(GreedyBot):\n    name = 'slow'\n")
    registry = BotRegistry([tmp_path], env=False, cwd=False, entry_points=False,
                           sandbox=Sandbox(), startup_timeout=8)
    assert time.time() > until and "slow" in registry.bots, registry.broken
