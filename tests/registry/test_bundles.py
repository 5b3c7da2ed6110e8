"""Shipping folder bots to workers: the files a bot takes with it, rebuilt elsewhere from them
alone; bad lists of files."""

import pickle
import shutil
import sys

import pytest
from registry_support import (
    forget,
    forget_wlib,
    local,
    write_bot,
    write_bundled_bot,
    write_submissions,
)

from kdtourney.registry import BotRegistry, EntrantError, bundles


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


@pytest.mark.parametrize("files,error", [
    ('["../outside.json"]', "'../outside.json' is outside the bot's folder"),
    ('["data"]', "'data/link.json' is a link to a file outside the bot's folder"),
    ('["missing.json"]', "'missing.json' does not exist"),
    ('"weights.json"', "must be a list of paths written out"),
    ('[name for name in "ab"]', "must be a list of paths written out"),
    ('["big.bin"]', "the files hold 0.1 MiB, over the 0 MiB a bot may take to every worker")])
def test_bad_bot_files_are_a_broken_module(tmp_path, monkeypatch, files, error):
    monkeypatch.setattr(bundles, "BUNDLE_LIMIT", 1000)
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
