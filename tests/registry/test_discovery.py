"""Finding bots: folders, the environment and ./bots, entry points; broken and duplicate
modules; what a bots folder holds and what --sandbox refuses there."""

import os
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest
from registry_support import forget, local, write_bot, write_bundled_bot

from kdtourney.bots.random_bot import RandomBot
from kdtourney.external import Sandbox
from kdtourney.registry import BotRegistry, BotsDirError, DuplicateBotError, EntrantError, discovery


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
    monkeypatch.setattr(discovery, "BUILTIN_MODULES",
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
    monkeypatch.setattr(discovery, "installed_entry_points", lambda: points)
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
    for name in discovery.BUILTIN_MODULES:
        stem = name.rsplit(".", 1)[-1]
        assert any(info.cls.__module__ == name for info in reg.bots.values()) or \
            any(b.origin == f"{name} (built-in)" for b in reg.broken), stem


# --- one bot, one folder; flat folders ---------------------------------------------------------


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


@pytest.mark.process
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
