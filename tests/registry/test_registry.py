"""The bot registry: discovery in folders, the environment and ./bots, entry points; broken and
duplicate modules; entrant specs; shipping folder modules to a worker."""

import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from kdtourney.registry import registry as registry_module
from kdtourney.registry.registry import BotRegistry, BotsDirError, DuplicateBotError, Entrant, EntrantError, parse_entrant
from kdtourney.external import Sandbox
from kdtourney.bots.random_bot import RandomBot

BOT = '''
from kdtourney.bots import Bot


class {cls}(Bot):
    """{doc}

    More text that is not the description.
    """

    name = "{name}"

    def __init__(self, depth: int = 2, c: float = 0.5, greedy: bool = False, policy: str = "random"):
        self.depth, self.c, self.greedy, self.policy = depth, c, greedy, policy

    def act(self, view):
        return view.legal_actions()[0]
'''


def write_bot(folder: Path, filename: str, name: str, cls: str = "TmpBot", doc: str = "A test bot.",
              extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / filename
    path.write_text(BOT.format(cls=cls, name=name, doc=doc) + textwrap.dedent(extra))
    return path


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No KDTOURNEY_BOTS_DIR from outside; a working directory without ./bots; of the built-ins
    only `random` (the search bots are tested on their own)."""
    monkeypatch.delenv("KDTOURNEY_BOTS_DIR", raising=False)
    monkeypatch.setattr(registry_module, "BUILTIN_MODULES", ("kdtourney.bots.random_bot",))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def local(bots_dirs=(), **kw):
    """A registry of built-ins and the given folders only."""
    return BotRegistry(bots_dirs, env=False, cwd=False, entry_points=False, **kw)


# --- discovery --------------------------------------------------------------------------------

def test_builtin_random_is_always_there():
    reg = local()
    info = reg.bots["random"]
    assert info.cls is RandomBot and info.origin == "built-in"
    assert info.description == "Uniform over the legal actions." and info.parameters == {}
    assert isinstance(reg.create("random"), RandomBot)


def test_bot_module_in_a_bots_dir_is_found_by_name(tmp_path):
    path = write_bot(tmp_path / "mine", "mybot.py", "tmp-bot", doc="Plays the first action.")
    reg = local([tmp_path / "mine"])
    info = reg.bots["tmp-bot"]
    assert info.origin == str(path.resolve())
    assert info.description == "Plays the first action."
    assert info.parameters == {"depth": 2, "c": 0.5, "greedy": False, "policy": "random"}
    bot = reg.create("tmp-bot:depth=5:greedy=true")
    assert type(bot) is info.cls and (bot.depth, bot.c, bot.greedy) == (5, 0.5, True)
    assert "tmp-bot" in reg and "nope" not in reg


def test_bots_dir_can_be_a_single_path_string(tmp_path):
    write_bot(tmp_path / "mine", "mybot.py", "tmp-bot")
    assert "tmp-bot" in local(str(tmp_path / "mine")).bots


def test_environment_variable_is_a_path_list(tmp_path, monkeypatch):
    write_bot(tmp_path / "a", "one.py", "bot-one")
    write_bot(tmp_path / "b", "two.py", "bot-two")
    monkeypatch.setenv("KDTOURNEY_BOTS_DIR", os.pathsep.join([str(tmp_path / "a"), "",
                                                              str(tmp_path / "b")]))
    reg = BotRegistry(cwd=False, entry_points=False)
    assert {"bot-one", "bot-two"} <= set(reg.bots)
    assert "bot-one" not in BotRegistry(env=False, cwd=False, entry_points=False).bots


def test_bots_folder_under_the_working_directory(isolated):
    assert set(local().bots) == set(BotRegistry(env=False, entry_points=False).bots)  # no ./bots
    write_bot(isolated / "bots", "here.py", "here-bot")
    reg = BotRegistry(env=False, entry_points=False)
    assert reg.bots["here-bot"].origin == str((isolated / "bots" / "here.py").resolve())
    assert "here-bot" not in BotRegistry(env=False, cwd=False, entry_points=False).bots


def test_the_same_folder_twice_is_searched_once(tmp_path, monkeypatch, isolated):
    write_bot(isolated / "bots", "here.py", "here-bot")
    monkeypatch.setenv("KDTOURNEY_BOTS_DIR", str(isolated / "bots"))
    reg = BotRegistry([isolated / "bots", "bots"], entry_points=False)
    assert "here-bot" in reg.bots


def test_missing_folder_is_an_error(tmp_path, monkeypatch):
    with pytest.raises(BotsDirError, match="'.*nowhere' does not exist"):
        local([tmp_path / "nowhere"])
    (tmp_path / "file.py").write_text("")
    with pytest.raises(BotsDirError, match="is not a folder"):
        local([tmp_path / "file.py"])
    monkeypatch.setenv("KDTOURNEY_BOTS_DIR", str(tmp_path / "gone"))
    with pytest.raises(BotsDirError, match="KDTOURNEY_BOTS_DIR"):
        BotRegistry(cwd=False, entry_points=False)


def test_broken_modules_are_reported_and_do_not_hide_the_good_ones(tmp_path):
    folder = tmp_path / "mixed"
    write_bot(folder, "good.py", "good-bot")
    (folder / "syntax.py").write_text("from kdtourney.bots import Bot\n\nclass X(Bot)\n    pass\n")
    (folder / "raising.py").write_text("x = 1\n\ny = 1 / 0\n")
    (folder / "missing_dep.py").write_text("import not_a_module_anywhere_kdt\n")
    (folder / "exits.py").write_text("import sys\nsys.exit(3)\n")
    reg = local([folder])
    assert "good-bot" in reg.bots
    errors = {Path(b.origin).name: b.error for b in reg.broken}
    assert set(errors) == {"syntax.py", "raising.py", "missing_dep.py", "exits.py"}
    assert all(Path(b.origin).parent == folder.resolve() for b in reg.broken)
    assert errors["syntax.py"].startswith("SyntaxError:") and "(line 3)" in errors["syntax.py"]
    assert errors["raising.py"] == "ZeroDivisionError: division by zero (line 3)"
    assert "ModuleNotFoundError" in errors["missing_dep.py"]
    assert errors["exits.py"].startswith("SystemExit")
    assert all("\n" not in e for e in errors.values())


def test_unknown_bot_points_at_a_broken_module_of_that_name(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "fancy.py").write_text("raise RuntimeError('no GPU')\n")
    with pytest.raises(EntrantError, match=r"unknown bot 'fancy'; available: .*random.*"
                                           r"fancy\.py failed to import: RuntimeError: no GPU"):
        local([tmp_path / "b"]).create("fancy")


def test_unknown_bot_mentions_bot_files_that_could_not_be_read(tmp_path):
    """A TOML file names its bot inside: when it cannot be read, the name is unknown, but the
    broken file is said."""
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "bad.toml").write_text('name = "tb"\ncommand = [unclosed\n')
    with pytest.raises(EntrantError, match=r"unknown bot 'tb'; available: .*; 1 bot file\(s\) "
                                           r"could not be read, e.g. .*bad\.toml: not a readable"):
        local([tmp_path / "b"]).resolve("tb")


def test_missing_builtin_module_is_listed_as_broken(monkeypatch):
    monkeypatch.setattr(registry_module, "BUILTIN_MODULES",
                        ("kdtourney.bots.random_bot", "kdtourney.bots.not_written_yet"))
    reg = local()
    assert "random" in reg.bots
    assert [(b.origin, b.error) for b in reg.broken] == [
        ("kdtourney.bots.not_written_yet (built-in)",
         "ModuleNotFoundError: No module named 'kdtourney.bots.not_written_yet'")]


def test_duplicate_names_name_both_files(tmp_path):
    a = write_bot(tmp_path / "a", "first.py", "twin", cls="First")
    b = write_bot(tmp_path / "b", "second.py", "twin", cls="Second")
    with pytest.raises(DuplicateBotError) as err:
        local([tmp_path / "a", tmp_path / "b"])
    message = str(err.value)
    assert "'twin'" in message and str(a.resolve()) in message and str(b.resolve()) in message
    assert "First" in message and "Second" in message and "\n" not in message


def test_duplicate_of_a_builtin_name(tmp_path):
    write_bot(tmp_path / "a", "rnd.py", "random")
    with pytest.raises(DuplicateBotError, match=r"kdtourney.bots.random_bot.RandomBot \(built-in\)"
                                                r" and TmpBot in .*rnd\.py"):
        local([tmp_path / "a"])


def test_only_named_bot_classes_defined_in_the_module_join(tmp_path):
    folder = tmp_path / "f"
    write_bot(folder, "family.py", "child", extra='''
        from kdtourney.bots.random_bot import RandomBot   # imported: not this module's bot


        class Helper(Bot):                                # no name: a base class, not a bot
            def act(self, view):
                return view.legal_actions()[-1]


        class NotABot:
            name = "not-a-bot"
        ''')
    reg = local([folder])
    assert set(reg.bots) - set(local().bots) == {"child"}
    assert reg.broken == local().broken


def test_helper_modules_are_importable_but_not_bots_and_leave_sys_path(tmp_path):
    folder = tmp_path / "withhelper"
    folder.mkdir()
    (folder / "_kdt_helper_xyz.py").write_text("FACTOR = 3\n")
    write_bot(folder, "uses.py", "uses-helper", extra='''
        import _kdt_helper_xyz
        DEPTH = _kdt_helper_xyz.FACTOR
        ''')
    before = list(sys.path)
    reg = local([folder])
    assert sys.path == before
    assert sys.modules[reg.bots["uses-helper"].cls.__module__].DEPTH == 3
    assert not any("helper" in b.origin for b in reg.broken)


def test_same_file_name_in_two_folders_does_not_clash(tmp_path):
    one = write_bot(tmp_path / "one", "mybot.py", "bot-a")
    two = write_bot(tmp_path / "two", "mybot.py", "bot-b")
    reg = local([one.parent, two.parent])
    a, b = reg.bots["bot-a"].cls, reg.bots["bot-b"].cls
    assert a.__module__ != b.__module__
    assert sys.modules[a.__module__].__file__ == str(one.resolve())
    assert sys.modules[b.__module__].__file__ == str(two.resolve())
    assert "mybot" not in sys.modules


def test_bot_without_parameter_default_or_with_a_bad_name_is_broken(tmp_path):
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "odd.py").write_text(textwrap.dedent('''
        from kdtourney.bots import Bot

        class NeedsDepth(Bot):
            name = "needs-depth"
            def __init__(self, depth):
                self.depth = depth

        class Colon(Bot):
            name = "a:b"
        '''))
    reg = local([folder])
    assert "needs-depth" not in reg.bots and "a:b" not in reg.bots
    errors = " | ".join(b.error for b in reg.broken)
    assert "depth has none" in errors and "'a:b'" in errors


# --- entry points -----------------------------------------------------------------------------

def test_entry_points_name_a_module_or_a_class(tmp_path, monkeypatch):
    write_bot(tmp_path / "pkgs", "kdt_ep_module.py", "ep-module-bot", cls="ModBot")
    write_bot(tmp_path / "pkgs", "kdt_ep_class.py", "ep-class-bot", cls="ClassBot")
    (tmp_path / "pkgs" / "kdt_ep_broken.py").write_text("raise ImportError('needs torch')\n")
    (tmp_path / "pkgs" / "kdt_ep_empty.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    group = "kdtourney.bots"
    points = [metadata.EntryPoint("mods", "kdt_ep_module", group),
              metadata.EntryPoint("one", "kdt_ep_class:ClassBot", group),
              metadata.EntryPoint("bad", "kdt_ep_broken", group),
              metadata.EntryPoint("empty", "kdt_ep_empty", group),
              metadata.EntryPoint("rnd", "kdtourney.bots.random_bot:RandomBot", group)]
    monkeypatch.setattr(registry_module, "_entry_points", lambda: points)
    reg = BotRegistry(env=False, cwd=False)
    assert reg.bots["ep-module-bot"].origin == "entry point mods"
    assert reg.bots["ep-class-bot"].origin == "entry point one"
    assert reg.bots["random"].origin == "built-in"  # the same class reached twice is one bot
    broken = {b.origin: b.error for b in reg.broken}
    assert broken["entry point bad"] == "ImportError: needs torch"
    assert "defines no Bot subclass" in broken["entry point empty"]
    assert "ep-module-bot" not in BotRegistry(env=False, cwd=False, entry_points=False).bots


def test_real_builtins_and_entry_points_load_without_crashing(monkeypatch):
    monkeypatch.undo()  # the real list of built-in modules, whatever state they are in
    reg = BotRegistry(env=False, cwd=False)
    assert "random" in reg.bots
    for name in registry_module.BUILTIN_MODULES:
        stem = name.rsplit(".", 1)[-1]
        assert any(info.cls.__module__ == name for info in reg.bots.values()) or \
            any(b.origin == f"{name} (built-in)" for b in reg.broken), stem


# --- entrants ---------------------------------------------------------------------------------

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
    with pytest.raises(EntrantError, match=r"^touchy:level=4: RuntimeError: too high \(line \d+\)$"):
        reg.resolve("touchy:level=4")
    assert reg.resolve("touchy:level=2").kwargs == {"level": 2}
    reg.resolve("touchy:level=2")  # checked once
    assert log.read_text() == "made 2\nclosed\n"


# --- shipping folder modules to workers -------------------------------------------------------

def test_from_sources_round_trip(tmp_path):
    folder = tmp_path / "shipped"
    folder.mkdir()
    (folder / "_kdt_ship_helper.py").write_text("BONUS = 7\n")
    write_bot(folder, "shipbot.py", "ship-bot", extra='''
        import _kdt_ship_helper
        BONUS = _kdt_ship_helper.BONUS
        ''')
    write_bot(tmp_path / "other", "shipbot.py", "ship-bot-2")
    (tmp_path / "other" / "broken.py").write_text("1/0\n")
    here = local([folder, tmp_path / "other"])
    files = here.source_files()
    shipped_folder, other = str(folder.resolve()), str((tmp_path / "other").resolve())
    assert {f: set(names) for f, names in files.items()} == {
        shipped_folder: {"shipbot.py", "_kdt_ship_helper.py"}, other: {"shipbot.py", "broken.py"}}
    assert files[shipped_folder]["shipbot.py"] == (folder / "shipbot.py").read_bytes()
    shipped = pickle.dumps(here.create("ship-bot:depth=3"))  # a bot sent to a worker

    shutil.rmtree(folder)  # the worker does not have the files
    shutil.rmtree(tmp_path / "other")
    sys.modules.pop("_kdt_ship_helper", None)
    there = BotRegistry.from_sources(files, entry_points=False)
    assert set(there.bots) == set(here.bots)
    assert [(b.origin, b.error) for b in there.broken] == [(b.origin, b.error) for b in here.broken]
    for name, info in here.bots.items():
        other = there.bots[name]
        assert (other.origin, other.description, other.parameters) == \
            (info.origin, info.description, info.parameters)
        assert other.cls.__module__ == info.cls.__module__
    assert sys.modules[there.bots["ship-bot"].cls.__module__].BONUS == 7
    assert there.source_files() == files
    # a bot pickled in the scheduling process loads on the worker, as the worker's class
    copy = pickle.loads(shipped)
    assert type(copy) is there.bots["ship-bot"].cls and copy.depth == 3


# --- identity: what code plays ----------------------------------------------------------------

def test_identity_is_the_code_not_the_place(tmp_path):
    write_bot(tmp_path / "a", "mybot.py", "id-bot")
    write_bot(tmp_path / "a", "other.py", "id-other", cls="Other")
    shutil.copytree(tmp_path / "a", tmp_path / "clone")
    one, two = local([tmp_path / "a"]), local([tmp_path / "clone"])
    first = one.identity("id-bot")
    assert first == one.identity("id-bot:depth=5")  # parameters are the entrant's label, not code
    assert first["kind"] == "python" and first["origin"] == str((tmp_path / "a" / "mybot.py").resolve())
    assert len(first["digest"]) == 12 and len(first["source_sha256"]) == 64
    clone = two.identity("id-bot")
    assert clone["digest"] == first["digest"] and clone["origin"] != first["origin"]
    # the module, and a helper it may import, are its code; another bot module is not
    (tmp_path / "clone" / "other.py").write_text((tmp_path / "clone" / "other.py").read_text()
                                                 + "\n# changed\n")
    assert local([tmp_path / "clone"]).identity("id-bot")["digest"] == first["digest"]
    (tmp_path / "clone" / "_helper.py").write_text("X = 1\n")
    assert local([tmp_path / "clone"]).identity("id-bot")["digest"] != first["digest"]
    (tmp_path / "a" / "mybot.py").write_text((tmp_path / "a" / "mybot.py").read_text() + "\n# v2\n")
    assert one.identity("id-bot") == first  # a registry keeps the code it read
    assert local([tmp_path / "a"]).identity("id-bot")["digest"] != first["digest"]
    # a registry rebuilt from shipped sources (a worker) knows the same code
    assert BotRegistry.from_sources(one.source_files(), entry_points=False).identity(
        "id-bot")["digest"] == first["digest"]
    builtin = one.identity("random")
    assert builtin["origin"] == "built-in" and builtin["digest"] != first["digest"]
    with pytest.raises(EntrantError, match="unknown bot"):
        one.identity("nobot")


# run on a copy of the package (argv[1]): every built-in bot's digest, then again after each edit
# (argv[2]: [file under the package, old text, new text], in order)
_DIGESTS_AFTER_EDITS = """
import json
import sys
from pathlib import Path

from kdtourney.registry import registry

package = Path(registry.__file__).parent.parent
assert package == Path(sys.argv[1]), package  # the copy, not the installed package


def digests():
    registry.builtin_sha256.cache_clear()
    reg = registry.BotRegistry(env=False, cwd=False, entry_points=False)
    return {name: reg.identity(name)["digest"] for name in reg.bots}


seen = [digests()]
for name, old, new in json.loads(sys.argv[2]):
    text = (package / name).read_text()
    assert old in text, (name, old)
    (package / name).write_text(text.replace(old, new, 1))
    seen.append(digests())
print(json.dumps(seen))
"""


def test_a_builtin_bots_identity_leaves_out_benchmarks_training_and_compiling(tmp_path):
    """Editing a kernel that only the benchmarks or the training of a network run, or how kernels
    are compiled, changes no built-in bot's identity (a ladder would otherwise see a new mcts);
    editing one mcts searches with changes mcts's, and not greedy's."""
    package = Path(registry_module.__file__).parent.parent
    copy = tmp_path / "src" / "kdtourney"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    edits = [("engine/bench_kernels.py", "res += one", "res -= one"),
             ("bots/bench_kernels.py", "total = 0\n", "total = 1\n"),
             ("bots/train_kernels.py", "out[i, 0] = margin / n", "out[i, 0] = margin / n / 2"),
             ("engine/jit.py", "BIG_FUNCTION = 1000", "BIG_FUNCTION = 2000"),
             ("engine/numba_version.py", "TESTED = ((0, 68), (0, 68))",
              "TESTED = ((0, 68), (0, 69))"),
             ("bots/search_kernels.py", "    useed = np.uint64(seed)\n",
              "    useed = np.uint64(seed + 1)\n")]
    env = dict(os.environ, PYTHONPATH=str(copy.parent))
    done = subprocess.run([sys.executable, "-c", _DIGESTS_AFTER_EDITS, str(copy), json.dumps(edits)],
                          env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    before, *helpers, searched = json.loads(done.stdout)
    assert {"mcts", "greedy", "mce", "expectimax", "value-greedy", "random"} <= set(before)
    assert helpers == [before] * 5
    assert searched["mcts"] != before["mcts"] and searched["greedy"] == before["greedy"]


def test_identity_of_an_entry_point_is_its_package(tmp_path, monkeypatch):
    package = tmp_path / "pkgs" / "kdt_id_pkg"
    write_bot(package, "bots.py", "pkg-bot")
    (package / "__init__.py").write_text("")
    (package / "weights.txt").write_text("1 2 3\n")
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    points = [metadata.EntryPoint("pkg", "kdt_id_pkg.bots", "kdtourney.bots")]
    monkeypatch.setattr(registry_module, "_entry_points", lambda: points)
    before = BotRegistry(env=False, cwd=False).identity("pkg-bot")
    assert before["origin"] == "entry point pkg"
    (package / "weights.txt").write_text("1 2 4\n")  # data of the package plays too
    assert BotRegistry(env=False, cwd=False).identity("pkg-bot")["digest"] != before["digest"]


# --- a bot of several files: KDTOURNEY_FILES --------------------------------------------------

def write_bundled_bot(folder: Path, weight: int = 3) -> Path:
    """A folder bot importing its package wlib/ (with a submodule) and reading weights.json."""
    (folder / "wlib").mkdir(parents=True, exist_ok=True)
    (folder / "wlib" / "__init__.py").write_text("from wlib.net import score\n")
    (folder / "wlib" / "net.py").write_text("def score(w):\n    return w * 2\n")
    (folder / "weights.json").write_text(f'{{"w": {weight}}}')
    return write_bot(folder, "wbot.py", "w-bot", extra='''
        import json
        from pathlib import Path

        import wlib

        KDTOURNEY_FILES = ["wlib", "weights.json"]
        WEIGHT = wlib.score(json.loads((Path(__file__).parent / "weights.json").read_text())["w"])
        ''')


def forget_wlib():
    for name in [m for m in sys.modules if m == "wlib" or m.startswith("wlib.")]:
        del sys.modules[name]


def test_a_bot_ships_its_package_and_data(tmp_path):
    folder = tmp_path / "bundled"
    write_bundled_bot(folder)
    (folder / "notes.txt").write_text("not the bot's")
    forget_wlib()
    here = local([folder])
    assert sys.modules[here.bots["w-bot"].cls.__module__].WEIGHT == 6
    shipped = here.source_files()[str(folder.resolve())]
    assert set(shipped) == {"wbot.py", "wlib/__init__.py", "wlib/net.py", "weights.json"}
    identity = here.identity("w-bot")
    assert identity["files"] == ["wbot.py", "weights.json", "wlib/__init__.py", "wlib/net.py"]
    files = here.source_files()
    shutil.rmtree(folder)  # a worker elsewhere: only what was shipped
    forget_wlib()
    there = BotRegistry.from_sources(files, entry_points=False)
    assert not there.broken
    assert sys.modules[there.bots["w-bot"].cls.__module__].WEIGHT == 6
    assert there.identity("w-bot")["digest"] == identity["digest"]
    forget_wlib()


@pytest.mark.parametrize("change", ["weights.json", "wlib/net.py", "wlib/extra.py"])
def test_a_bots_data_and_subpackage_are_its_identity(tmp_path, change):
    folder = tmp_path / "bundled"
    write_bundled_bot(folder)
    forget_wlib()
    before = local([folder]).identity("w-bot")["digest"]
    forget_wlib()
    (folder / "notes.txt").write_text("not listed: not the bot's")
    assert local([folder]).identity("w-bot")["digest"] == before
    forget_wlib()
    path = folder / change
    path.write_text('{"w": 4}' if change.endswith(".json") else
                    (path.read_text() if path.exists() else "") + "\n# changed\n")
    assert local([folder]).identity("w-bot")["digest"] != before
    forget_wlib()


@pytest.mark.parametrize("files,error", [
    ('["../outside.json"]', "'../outside.json' is outside the bot's folder"),
    ('["data"]', "'data/link.json' is a link to a file outside the bot's folder"),
    ('["missing.json"]', "'missing.json' does not exist"),
    ('"weights.json"', "must be a list of paths written out"),
    ('[name for name in "ab"]', "must be a list of paths written out"),
    ('["big.bin"]', "the files hold 0.1 MiB, over the 0 MiB a bot may take to every worker")])
def test_bad_bot_files_are_a_broken_module(tmp_path, monkeypatch, files, error):
    monkeypatch.setattr(registry_module, "BUNDLE_LIMIT", 1000)
    folder = tmp_path / "b"
    write_bot(folder, "fbot.py", "f-bot", extra=f"KDTOURNEY_FILES = {files}\n")
    (tmp_path / "outside.json").write_text("{}")
    (folder / "big.bin").write_bytes(b"x" * 100_000)
    (folder / "data").mkdir()
    (folder / "data" / "link.json").symlink_to(tmp_path / "outside.json")  # sent as its bytes
    reg = local([folder])
    assert "f-bot" not in reg.bots
    [broken] = reg.broken
    assert error in broken.error
    with pytest.raises(EntrantError, match="KDTOURNEY_FILES"):
        reg.resolve("fbot")


def test_a_kdtp_script_and_build_scripts_in_a_bots_folder_are_never_imported(tmp_path):
    mark = tmp_path / "ran"
    side_effect = f"open({str(mark)!r}, 'a').write(__file__ + '\\n')\n"
    folder = tmp_path / "bots"
    folder.mkdir()
    (folder / "script.py").write_text("import sys\n" + side_effect + "sys.stdin.read()\n")
    (folder / "script.toml").write_text(f'name = "script"\ncommand = ["{sys.executable}", '
                                        '"script.py"]\n')
    (folder / "setup.py").write_text(side_effect)
    (folder / "build.py").write_text(side_effect)
    registry = BotRegistry([folder], env=False, cwd=False, entry_points=False)
    assert "script" in registry.bots and registry.broken == []
    assert not mark.exists()


# --- one bot, one folder --------------------------------------------------------------------

def write_submissions(bots: Path) -> Path:
    """A bots folder of submissions, one subfolder each (alice: a module with its package and
    data, nothing listed; bob: a TOML bot), beside a flat bot and folders that are no bot's."""
    alice = bots / "alice"
    (alice / "alib" / "deep").mkdir(parents=True)
    (alice / "data").mkdir()
    (alice / "alib" / "__init__.py").write_text("from alib.deep.pick import PICK\n")
    (alice / "alib" / "deep" / "pick.py").write_text("PICK = 0\n")
    (alice / "data" / "w.json").write_text('{"w": 5}')
    write_bot(alice, "alice.py", "alice", extra='''
        import json
        from pathlib import Path

        import alib

        WEIGHT = json.loads((Path(__file__).parent / "data" / "w.json").read_text())["w"]
        ''')
    (alice / "play.log").write_text("what it wrote while it played\n")
    (alice / ".cache").mkdir()
    (alice / ".cache" / "x").write_text("hidden")
    (bots / "bob").mkdir()
    (bots / "bob" / "bob.toml").write_text(f'name = "bob"\ncommand = ["{sys.executable}", '
                                           '"bob.py"]\n')
    (bots / "bob" / "bob.py").write_text("print('bob')\n")
    (bots / "bob" / "book.bin").write_bytes(b"\x00\x01")
    write_bot(bots, "flat.py", "flat", cls="Flat")
    (bots / "pkg").mkdir()  # a package: a flat bot's, never a bot's folder
    (bots / "pkg" / "__init__.py").write_text("raise RuntimeError('never imported')\n")
    (bots / "_data").mkdir()  # `_`: data, never a bot's folder
    (bots / "_data" / "tool.py").write_text("raise RuntimeError('never imported')\n")
    (bots / "ladder.txt").write_text("random\n")
    return bots


def forget(*packages):
    for name in [m for m in sys.modules if m.split(".")[0] in packages]:
        del sys.modules[name]


def test_a_bot_in_a_folder_of_its_own_is_the_whole_folder(tmp_path):
    bots = write_submissions(tmp_path / "bots")
    forget("alib")
    here = local([bots])
    assert not here.broken and {"alice", "bob", "flat"} <= set(here.bots)
    assert here.bots["alice"].origin == str((bots / "alice" / "alice.py").resolve())
    assert here.bots["bob"].program.own_folder and here.bots["bob"].program.cwd == \
        str((bots / "bob").resolve())
    assert sys.modules[here.bots["alice"].cls.__module__].WEIGHT == 5
    identity = here.identity("alice")
    # every file of its folder but logs, caches and hidden ones, with no KDTOURNEY_FILES
    assert identity["files"] == ["alice.py", "alib/__init__.py", "alib/deep/pick.py",
                                 "data/w.json"]
    shipped = here.source_files()[str(bots.resolve())]
    assert {name for name in shipped if name.startswith("alice/")} == {
        "alice/alice.py", "alice/alib/__init__.py", "alice/alib/deep/pick.py",
        "alice/data/w.json"}
    assert {"bob/bob.toml", "bob/bob.py", "flat.py"} <= set(shipped)
    files = here.source_files()
    shutil.rmtree(bots)  # a worker elsewhere: only what was shipped
    forget("alib")
    there = BotRegistry.from_sources(files, entry_points=False)
    assert not there.broken and sys.modules[there.bots["alice"].cls.__module__].WEIGHT == 5
    assert there.identity("alice")["digest"] == identity["digest"]
    forget("alib")


def kdtp_files(registry, name):
    """The files part of a TOML bot's identity, without starting it."""
    from kdtourney.external import program_identity

    return program_identity(registry.bots[name].program, None)["files_sha256"]


def test_a_bots_identity_is_its_own_files_whatever_its_neighbours_do(tmp_path):
    bots = write_submissions(tmp_path / "bots")

    def digests():
        forget("alib")
        reg = local([bots])
        return {"alice": reg.identity("alice")["digest"], "bob": kdtp_files(reg, "bob"),
                "flat": reg.identity("flat")["digest"]}

    before = digests()
    for change, which in [
            (lambda: (bots / "ladder.txt").write_text("random\ngreedy\n"), set()),
            (lambda: write_bot(bots / "carol", "carol.py", "carol"), set()),  # a bot added
            (lambda: (bots / "alice" / "play.log").write_text("more\n"), set()),  # its log
            (lambda: (bots / "alice" / "__pycache__").mkdir(), set()),
            (lambda: (bots / "bob" / "book.bin").write_bytes(b"\x02"), {"bob"}),
            (lambda: (bots / "alice" / "alib" / "deep" / "pick.py").write_text("PICK = -1\n"),
             {"alice"}),
            (lambda: (bots / "alice" / "data" / "new.json").write_text("{}"), {"alice"}),
            (lambda: (bots / "flat.py").write_text((bots / "flat.py").read_text() + "# v2\n"),
             {"flat"}),
            (lambda: shutil.rmtree(bots / "carol"), set())]:  # a bot removed
        change()
        now = digests()
        assert {name for name in now if now[name] != before[name]} == which
        before = now
    forget("alib")


def test_what_is_not_a_bots_folder(tmp_path):
    """Packages, `_` and hidden folders, tournament folders and folders with no bot file at
    their top are left alone: a flat bot's package or data stays its own."""
    bots = tmp_path / "bots"
    for sub in ("pkg", "_data", ".git", "run", "models"):
        (bots / sub).mkdir(parents=True)
        (bots / sub / "x.py").write_text("raise RuntimeError('imported')\n")
    (bots / "pkg" / "__init__.py").write_text("")
    (bots / "run" / "tournament.sqlite").write_text("")
    (bots / "models" / "x.py").unlink()
    (bots / "models" / "weights.bin").write_bytes(b"\x00")
    reg = local([bots])
    assert reg.broken == [] and set(reg.bots) == {"random"}


def test_a_flat_bot_importing_a_sibling_it_does_not_list_is_one_error(tmp_path):
    folder = tmp_path / "flat"
    write_bundled_bot(folder)
    source = (folder / "wbot.py").read_text()
    (folder / "wbot.py").write_text(source.replace('KDTOURNEY_FILES = ["wlib", "weights.json"]',
                                                   'KDTOURNEY_FILES = ["weights.json"]'))
    write_bot(folder, "helper.py", "helper-bot", cls="Helper")
    write_bot(folder, "hbot.py", "h-bot", cls="H", extra="from helper import Helper\n")
    forget("wlib", "helper")
    reg = local([folder])
    assert "w-bot" not in reg.bots and "h-bot" not in reg.bots and "helper-bot" in reg.bots
    errors = {Path(b.origin).name: b.error for b in reg.broken}
    assert errors == {
        "wbot.py": 'it imports wlib, which lies beside it but is not in its KDTOURNEY_FILES: add '
                   '"wlib" to KDTOURNEY_FILES (or give the bot a folder of its own)',
        "hbot.py": 'it imports helper, which lies beside it but is not in its KDTOURNEY_FILES: '
                   'add "helper.py" to KDTOURNEY_FILES (or give the bot a folder of its own)'}
    with pytest.raises(EntrantError, match='add "wlib" to KDTOURNEY_FILES'):
        reg.resolve("w-bot")
    forget("wlib", "helper")


def test_under_sandbox_a_flat_bot_may_not_list_another_bots_file(tmp_path):
    folder = tmp_path / "flat"
    write_bot(folder, "helper.py", "helper-bot", cls="Helper")
    write_bot(folder, "hbot.py", "h-bot", cls="H",
              extra='from helper import Helper\nKDTOURNEY_FILES = ["helper.py"]\n')
    forget("helper")
    assert "h-bot" in local([folder]).bots  # without a sandbox, as before
    sandboxed = local([folder], sandbox=Sandbox())
    [broken] = sandboxed.broken
    assert broken.refused and broken.error.startswith(
        f"refused by --sandbox: it names {(folder / 'helper.py').resolve()}, another bot's file")
    with pytest.raises(EntrantError, match=r"hbot\.py is refused by --sandbox: it names "):
        sandboxed.resolve("hbot")
    forget("helper")


def test_a_folder_a_flat_bot_names_is_its_own_not_a_bots_folder(tmp_path):
    """A KDTP script kept in a subfolder, a listed package without __init__.py: the flat bot's."""
    bots = tmp_path / "bots"
    (bots / "scripts").mkdir(parents=True)
    (bots / "scripts" / "mybot.py").write_text("import sys\nsys.stdin.read()\n")  # never imported
    (bots / "my.toml").write_text(f'name = "my"\ncommand = ["{sys.executable}", '
                                  '"scripts/mybot.py"]\n')
    (bots / "nslib").mkdir()
    (bots / "nslib" / "core.py").write_text("raise RuntimeError('only as its package')\n")
    write_bot(bots, "ns.py", "ns-bot", extra='KDTOURNEY_FILES = ["nslib"]\n')
    reg = local([bots])
    assert reg.broken == [] and {"my", "ns-bot"} <= set(reg.bots)
    assert not reg.bots["my"].program.own_folder
