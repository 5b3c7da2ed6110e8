"""A running ladder beside submissions that once stopped it (issue 52): each is one note, the
other bots enter and stay."""

import shutil

import pytest
from hostile_support import BOT, remove_deep, write_hostile_submissions
from ladder_support import NoteDisplay

from kdtourney import store
from kdtourney.commands import ladder, ladder_entrants, ladder_watch
from kdtourney.external.listing import list_modules
from kdtourney.match.settings import PlaySettings
from kdtourney.registry import sandboxed


@pytest.mark.slow
def test_a_ladder_takes_in_its_bots_beside_a_deep_folder_toml_and_module(tmp_path, request):
    bots, folder = tmp_path / "bots", tmp_path / "ladder"
    (bots / "one").mkdir(parents=True)
    (bots / "one" / "one.py").write_text(BOT.format(cls="One", name="one"))
    hostile = write_hostile_submissions(bots)
    request.addfinalizer(lambda: remove_deep(bots))
    store.Store.create(folder, {}, {}, {}).close()
    display = NoteDisplay()
    notes = display.notes

    outcome = ladder.LadderOutcome(folder=folder, stored_before=0)
    seen = ladder_watch.look([bots], ["random"], None, None, folder)
    assert ladder_watch.take_in(folder, seen, display, outcome) is not None
    assert {label: r["status"] for label, r in ladder_entrants.stored_entrants(folder).items()} \
        == {"one": "active", "random": "active"}
    assert sorted(note.split(":")[0] for note in notes) == sorted(map(str, hostile.values()))
    # the next look sees nothing new, and a change of the good bot beside them
    assert ladder_watch.look([bots], ["random"], None, None, folder, seen.signature) is None
    (bots / "one" / "one.py").write_text(BOT.format(cls="One", name="one") + "# v2\n")
    assert ladder_watch.look([bots], ["random"], None, None, folder, seen.signature) is not None


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_a_flood_of_modules_is_one_note_and_the_honest_bots_stay_listed(tmp_path, monkeypatch):
    """80 modules in one submission beside two honest ones, under --sandbox: the flood is one
    refusal naming it, never listed; the honest ones are listed once, a few at a time, and not
    again while their files stay the same."""
    bots, folder = tmp_path / "bots", tmp_path / "ladder"
    for name in ("one", "two"):
        (bots / name).mkdir(parents=True)
        (bots / name / f"{name}.py").write_text(BOT.format(cls=name.title(), name=name))
    (bots / "flood").mkdir()
    for i in range(80):
        (bots / "flood" / f"m{i}.py").write_text(BOT.format(cls=f"M{i}", name=f"m{i}"))
    store.Store.create(folder, {}, {}, {}).close()
    asked = []

    def counted(requests, settings, parallel=None):
        asked.append(sorted(requests))
        return list_modules(requests, settings, parallel)

    monkeypatch.setattr(sandboxed, "list_modules", counted)
    play = PlaySettings(sandbox=True)
    outcome = ladder.LadderOutcome(folder=folder, stored_before=0)
    seen = ladder_watch.look([bots], ["random"], 20, play, folder)
    assert seen.notes == [f"{bots / 'flood'}: refused: a bot's folder holds 80 bot modules, "
                          "more than the 8 kdtourney takes of one submission"]
    ladder_watch.take_in(folder, seen, None, outcome)
    assert {label: r["status"] for label, r in ladder_entrants.stored_entrants(folder).items()} \
        == {"one": "active", "two": "active", "random": "active"}
    assert asked == [[str(bots / "one" / "one.py"), str(bots / "two" / "two.py")]]
    (bots / "flood" / "m0.py").write_text("# changed\n")
    again = ladder_watch.look([bots], ["random"], 20, play, folder, seen.signature)
    assert sorted(again.found) == ["one", "random", "two"] and len(asked) == 1
