"""A move kdtourney played for a seat after its bot's fault is marked as such, in the replay text,
the game viewer (Chromium) and the faults table, and the call at fault is named as the bot counts
its calls ('act 3' for its third act), with seats numbered from 1 as everywhere a person reads."""

from __future__ import annotations

import html
import re
import textwrap

import pandas as pd
import pytest
from browser_support import page  # noqa: F401  (a fixture)
from click.testing import CliRunner

from kdtourney.cli import main
from kdtourney.engine import Game, Rules
from kdtourney.report.html import build_context
from kdtourney.report.page import substituted
from kdtourney.store import load_config, load_faults, load_games
from kdtourney.store.deals import fault_calls, rules_for

THIRD = textwrap.dedent('''
    from kdtourney.bots.base import Bot


    class Third(Bot):
        """The last legal action, but 99999 at its third act of every game."""
        name = "third"

        def setup(self, seat, rules, seed):
            self.acts = 0

        def act(self, view):
            self.acts += 1
            return 99999 if self.acts == 3 else view.legal_actions()[-1]
''')


@pytest.fixture(scope="module")
def faulty(tmp_path_factory):
    root = tmp_path_factory.mktemp("third")
    (root / "bots").mkdir()
    (root / "bots" / "third.py").write_text(THIRD)
    folder = root / "t"
    result = CliRunner().invoke(main, ["run", "--bots", "third,random", "--games", "2", "--seed",
                                       "3", "--bots-dir", str(root / "bots"), "--workers", "1",
                                       "--out", str(folder), "-q"])
    assert result.exit_code == 0, result.output
    return folder


def third_seat(folder, game):
    faults = load_faults(folder).query("game == @game")
    (seat,) = faults["seat"]
    return int(seat), faults


@pytest.mark.process
def test_the_call_at_fault_is_named_as_the_bot_counts_its_calls(faulty):
    games = load_games(faulty)
    rules = load_config(faulty)["tournament"]["rules"]
    for game in (0, 1):
        seat, faults = third_seat(faulty, game)
        assert list(faults["call"]) == [4]  # construction 0, setup 1, acts 2, 3, 4
        row = games[games["game"] == game].iloc[0]
        [(fault_seat, call, (deal, move))] = fault_calls(row, rules_for(rules, 2),
                                                         faults.to_dict("records"))
        assert (fault_seat, call, deal) == (seat, "act 3", 0)
        # its third move: two placements and claims alternate from the first round on
        assert move >= 2
    page_rows = build_context(faulty, n_boot=20)["faults"]["rows"]
    assert [(r["call"], r["kind"]) for r in page_rows] == [("act 3", "illegal")] * 2
    assert {r["seat"] for r in page_rows} <= {1, 2}  # from 1, as the pages count seats


@pytest.mark.process
def test_the_replay_text_marks_every_move_kdtourney_played_for_the_seat(faulty):
    seat, _ = third_seat(faulty, 0)
    result = CliRunner().invoke(main, ["replay", str(faulty), "0"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert f"fault: seat {seat + 1} third: illegal at its act 3: returned 99999, not a legal " \
           "action" in result.stdout
    mine = [line for line in lines if line.startswith("round") and f"seat {seat + 1} third" in line]
    marked = [line.endswith("[played by kdtourney, the first legal move: its bot faulted at its "
                            "act 3]") for line in mine]
    assert marked == [False, False] + [True] * (len(mine) - 2)  # from its third move on
    others = [line for line in lines if line.startswith("round") and "random" in line]
    assert others and not any("played by kdtourney" in line for line in others)


@pytest.mark.process
def test_the_faults_export_names_the_call_and_the_seat_as_the_replay_does(faulty, tmp_path):
    result = CliRunner().invoke(main, ["export", str(faulty), "--table", "faults", "-o",
                                       str(tmp_path / "f.csv")])
    assert result.exit_code == 0, result.output
    assert "bot_call names that call as the report and replay do" in result.stderr
    assert "its column seat counts from 0" in result.stderr
    exported = pd.read_csv(tmp_path / "f.csv")
    assert exported["call"].tolist() == [4, 4]  # the store's count, beside the bot's
    for game, seat, entrant, kind, bot_call in zip(exported["game"], exported["seat"],
                                                   exported["entrant"], exported["kind"],
                                                   exported["bot_call"]):
        replay = CliRunner().invoke(main, ["replay", str(faulty), str(game)]).stdout
        assert f"fault: seat {seat + 1} {entrant}: {kind} at its {bot_call}: " in replay


@pytest.mark.process
@pytest.mark.browser
def test_the_game_viewer_marks_the_moves_kdtourney_played(faulty, page):  # noqa: F811
    seat, _ = third_seat(faulty, 0)
    page.goto((faulty / "index.html").resolve().as_uri() + "#replay-0")
    page.wait_for_selector("#rp-title:has-text('Game 0')")
    texts = []
    for _ in range(int(page.get_attribute("#rp-slider", "max")) + 1):
        texts.append(page.text_content("#rp-move"))
        page.click("#rp-next")
    mine = [t for t in texts if f"(seat {seat + 1}): " in t and t.startswith("third")]
    flags = ["[played by kdtourney, the first legal move: its bot faulted at its act 3: illegal: "
             "returned 99999" in t for t in mine]
    assert flags[:2] == [False, False] and flags[2:] and all(flags[2:]), mine
    assert not any("played by kdtourney" in t for t in texts if t.startswith("random"))
    table = html.unescape(re.sub(r"\s+", " ", page.inner_text("#faults-table")))
    assert "act 3" in table


def test_the_viewer_names_each_fault_after_one_with_no_call_known():
    """A fault whose call is unknown (a timeout seen from outside) names nothing and moves no
    other fault's name onto the wrong seat."""
    seed = 11
    game = Game(Rules(players=2), seed)
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    row = dict(n_players=2, deal_seeds=[seed], moves=list(game.history))
    faults = [dict(seat=1, kind="timeout", message="t", call=None),
              dict(seat=0, kind="illegal", message="99999", call=4)]
    calls: dict = {}
    marks = substituted(5, row, Rules(players=2), faults, calls)
    assert calls == {(5, 0): "act 3"}
    assert [m[0] for m in marks] == [0] and marks[0][3].startswith("act 3: illegal")
