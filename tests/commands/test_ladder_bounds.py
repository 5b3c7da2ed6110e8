"""A running ladder beside submissions that once stopped it (issue 52): each is one note, the
other bots enter and stay."""

import pytest

from kdtourney import store
from kdtourney.commands import ladder, ladder_entrants, ladder_watch

from hostile_support import BOT, remove_deep, write_hostile_submissions


@pytest.mark.slow
def test_a_ladder_takes_in_its_bots_beside_a_deep_folder_toml_and_module(tmp_path, request):
    bots, folder = tmp_path / "bots", tmp_path / "ladder"
    (bots / "one").mkdir(parents=True)
    (bots / "one" / "one.py").write_text(BOT.format(cls="One", name="one"))
    hostile = write_hostile_submissions(bots)
    request.addfinalizer(lambda: remove_deep(bots))
    store.Store.create(folder, {}, {}, {}).close()
    notes = []

    class Display:
        def note(self, text):
            notes.append(text)

        def event(self, text):
            pass

    outcome = ladder.LadderOutcome(folder=folder, stored_before=0)
    seen = ladder_watch.look([bots], ["random"], None, None, folder)
    assert ladder_watch.take_in(folder, seen, Display(), outcome) is not None
    assert {label: r["status"] for label, r in ladder_entrants.stored_entrants(folder).items()} \
        == {"one": "active", "random": "active"}
    assert sorted(note.split(":")[0] for note in notes) == sorted(map(str, hostile.values()))
    # the next look sees nothing new, and a change of the good bot beside them
    assert ladder_watch.look([bots], ["random"], None, None, folder, seen.signature) is None
    (bots / "one" / "one.py").write_text(BOT.format(cls="One", name="one") + "# v2\n")
    assert ladder_watch.look([bots], ["random"], None, None, folder, seen.signature) is not None
