"""A bot may attach a short note to a decision (its evaluation, its line): a Python bot sets
`self.decision_note` in act, a KDTP program sends "note" beside its action (optional: KDTP/1
unchanged). The note is stored with its move, shown by `replay` and the game viewer (Chromium)."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from browser_support import page  # noqa: F401  (a fixture)
from click.testing import CliRunner

from kdtourney.cli import main
from kdtourney.external import kdtp
from kdtourney.store import load_games, load_notes, load_results

NOTER = textwrap.dedent('''
    from kdtourney.bots.base import Bot


    class Noter(Bot):
        """The first legal action, with a note on every other decision."""
        name = "noter"

        def setup(self, seat, rules, seed):
            self.acts = 0

        def act(self, view):
            self.acts += 1
            if self.acts % 2:
                self.decision_note = f"eval +{self.acts}.0, line: first legal   (act {self.acts})"
            return view.legal_actions()[0]
''')

# a KDTP/1 program in plain Python: notes on its first three decisions, and one of them not text
PROGRAM = textwrap.dedent(r'''
    import json, sys

    acts = 0
    for line in sys.stdin:
        message = json.loads(line)
        if message["type"] == "hello":
            print(json.dumps({"type": "hello", "name": "talker", "version": "1"}), flush=True)
        elif message["type"] == "game":
            acts = 0
        elif message["type"] == "act":
            acts += 1
            answer = {"type": "action", "action": message["legal"][0]}
            if acts <= 2:
                answer["note"] = f"kdtp note {acts} " + "x" * 300
            elif acts == 3:
                answer["note"] = {"not": "text"}
            print(json.dumps(answer), flush=True)
        elif message["type"] == "quit":
            break
''')


def test_kdtp_note_is_optional_text_cut_to_its_limit():
    assert kdtp.note_of({"type": "action", "action": 1}) is None
    assert kdtp.note_of({"type": "action", "action": 1, "note": 3}) is None
    assert kdtp.note_of({"type": "action", "action": 1, "note": "a\n b  c"}) == "a b c"
    assert len(kdtp.note_of({"note": "y" * 1000})) == kdtp.NOTE_LIMIT
    assert kdtp.action_message(kdtp.CLAIM_BASE + 3) == {"type": "action", "action": {"claim": 3}}
    assert kdtp.action_message(kdtp.CLAIM_BASE + 3, "+2.5") == {
        "type": "action", "action": {"claim": 3}, "note": "+2.5"}


@pytest.fixture(scope="module")
def noted(tmp_path_factory):
    root = tmp_path_factory.mktemp("notes")
    bots = root / "bots"
    bots.mkdir()
    (bots / "noter.py").write_text(NOTER)
    (bots / "_talker.py").write_text(PROGRAM)
    (bots / "talker.toml").write_text(f'name = "talker"\ncommand = ["{sys.executable}", '
                                      '"_talker.py"]\n')
    folders = {}
    for name, extra in (("plain", []), ("isolated", ["--isolate"])):
        folder = folders[name] = root / name
        result = CliRunner().invoke(main, ["run", "--bots", "noter,talker", "--games", "2",
                                           "--seed", "1", "--bots-dir", str(bots), "--workers",
                                           "1", "--out", str(folder), "-q", *extra])
        assert result.exit_code == 0, result.output
    return folders


@pytest.mark.process
def test_notes_are_stored_with_their_moves(noted):
    for folder in noted.values():
        notes = load_notes(folder)
        results = load_results(folder)
        assert not results["fault"].any()  # a note, text or not, is never a fault
        seat_of = {(g, e): s for g, e, s in zip(results["game"], results["entrant"],
                                                results["seat"])}
        for game, moves in zip(load_games(folder)["game"], load_games(folder)["moves"]):
            mine = notes[notes["game"] == game]
            noter = mine[mine["seat"] == seat_of[(game, "noter")]]
            talker = mine[mine["seat"] == seat_of[(game, "talker")]]
            assert list(noter["note"]) == [f"eval +{k}.0, line: first legal (act {k})"
                                           for k in range(1, 2 * len(noter), 2)]
            assert list(talker["note"]) == [f"kdtp note {k} " + "x" * (kdtp.NOTE_LIMIT - 12)
                                            for k in (1, 2)]
            assert mine["move"].max() < len(json.loads(moves)) and (mine["deal"] == 0).all()
    plain, isolated = (load_notes(f) for f in noted.values())
    assert plain.equals(isolated)  # a Python bot's notes cross its process as KDTP's


@pytest.mark.process
def test_replay_shows_each_note_with_its_move(noted):
    folder = noted["plain"]
    notes = load_notes(folder).query("game == 0")
    result = CliRunner().invoke(main, ["replay", str(folder), "0"])
    assert result.exit_code == 0, result.output
    moves = [line for line in result.stdout.splitlines() if line.startswith("round")]
    shown = {k: line.split("  -- note: ", 1)[1] for k, line in enumerate(moves)
             if "  -- note: " in line}
    assert shown == dict(zip(notes["move"], notes["note"]))


@pytest.mark.process
@pytest.mark.browser
def test_the_game_viewer_shows_each_note_with_its_move(noted, page):  # noqa: F811
    folder = noted["plain"]
    notes = load_notes(folder).query("game == 0")
    page.goto((folder / "index.html").resolve().as_uri() + "#replay-0")
    page.wait_for_selector("#rp-title:has-text('Game 0')")
    seen = {}
    for step in range(int(page.get_attribute("#rp-slider", "max")) + 1):
        text = page.text_content("#rp-move")
        if "its note: \u201c" in text:
            seen[step - 1] = text.split("its note: \u201c", 1)[1].split("\u201d")[0]
        page.click("#rp-next")
    assert seen == dict(zip(notes["move"], notes["note"]))  # step 0: the deal's start
