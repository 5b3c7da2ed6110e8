"""`kdtourney play`: a person plays a whole game in headless Chromium against a bot, through the
page's own controls, with every move of theirs checked by the engine; the game is stored as any
game is (replay and the report read it); bad input is a one-line error."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from arena_support import interrupt_when
from click.testing import CliRunner

from kdtourney.cli import main
from kdtourney.store import StoreError, load_blocks, load_games, load_results
from kdtourney.terminal.replay import replay_text

KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")
# the page's phase and version once it changed from version V: the person's turn, a game over, or
# the end; read together, in the page, as it changes (two reads could see two states)
NEXT = """v => { const e = document.querySelector("#play");
  const phase = e && e.dataset.phase, version = e && e.dataset.version;
  return ["yours", "over", "done"].includes(phase) && version !== v ? [phase, version] : null; }"""


def first_line(process, timeout=120.0) -> str:
    """The command's first line of output (its page's address), waited for at most `timeout` s."""
    lines = queue.Queue()
    threading.Thread(target=lambda: lines.put(process.stdout.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        process.kill()
        pytest.fail(f"kdtourney play said nothing in {timeout:g} s")


def cells(board, selector, attribute) -> set:
    return {tuple(map(int, value.split()[:2])) for value in board.locator(selector).evaluate_all(
        f"es => es.map(e => e.getAttribute('{attribute}'))")}


def check_the_limit_is_shaded(page) -> bool:
    """On the person's board, exactly the squares where the kingdom would outgrow 5 x 5 are shaded,
    and no legal placement lies there; whether any is."""
    board = page.locator("#pl-kingdoms li.featured")
    squares = cells(board, "[data-square]", "data-square")
    shaded = cells(board, "rect.beyond", "data-cell")
    rows, cols = [r for r, _ in squares], [c for _, c in squares]
    assert shaded == {(r, c) for r in range(-4, 5) for c in range(-4, 5)
                      if max(*rows, r) - min(*rows, r) >= 5 or max(*cols, c) - min(*cols, c) >= 5}
    assert not shaded & cells(board, "rect.target", "data-cell")
    return bool(shaded)


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.browser
def test_a_person_plays_a_whole_game_in_the_browser(page, tmp_path):
    folder = tmp_path / "game"
    process = subprocess.Popen([KDTOURNEY, "play", "--against", "random", "--seed", "4", "--out",
                                str(folder), "--no-browser"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = first_line(process)
        assert line.startswith("play at http://127.0.0.1:"), line
        url = line.split()[2]
        page.goto(url)
        version, decisions, refused, shaded_any = "-1", 0, False, False
        while True:
            phase, version = page.wait_for_function(NEXT, arg=version, timeout=60_000).json_value()
            if phase != "yours":
                break
            if not refused:  # the engine refuses what is not a move now, and the page says so
                answer = page.request.post(url + "move", data=json.dumps(
                    {"move": {"place": [4, 4, 4, 5]}, "version": int(version)}))
                assert answer.status == 409 and "legal" in answer.json()["error"], answer.text()
                refused = True
            shaded_any = check_the_limit_is_shaded(page) or shaded_any
            if not decisions:  # every domino's number is printed under it, not only in ARIA text
                dominoes = page.locator("#pl-rows svg.domino")
                numbers = page.locator("#pl-rows .tile-num")
                assert numbers.count() == dominoes.count() > 0
                assert [f"#{d}" for d in dominoes.evaluate_all(
                    "es => es.map(e => e.dataset.domino)")] == numbers.all_inner_texts()
                assert all(n.is_visible() for n in numbers.all())
                assert all(t.endswith(" points now") for t in
                           page.locator("#pl-kingdoms .pts").all_inner_texts())
            claims = page.locator("button[data-claim]")
            if claims.count():
                claims.last.click()
            elif page.locator("#pl-discard").is_visible():
                page.click("#pl-discard")
            else:  # where the domino's first half goes, then its second half
                page.locator("#pl-kingdoms rect.target").first.click()
                page.locator("#pl-kingdoms rect.target.second").last.click()
            decisions += 1
        assert phase in ("over", "done"), page.text_content("#pl-status")  # done: the report too
        assert shaded_any  # a kingdom soon spans two squares: the frame's far side is shaded
        assert page.text_content("#pl-error") == ""
        page.wait_for_selector('#play[data-phase="done"]', timeout=60_000)
        # the end says who won, by how much, every final score, and how to replay or play again
        end = page.text_content("#pl-status")
        points = [int(t.split()[0]) for t in page.locator("#pl-kingdoms .pts").all_inner_texts()]
        assert all(t.endswith(" points, final") for t in
                   page.locator("#pl-kingdoms .pts").all_inner_texts())
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert out.strip().endswith(f"{folder}: 1 game played"), out
    # stored as any game: the engine replays it, the person's seat made every decision of theirs
    results = load_results(folder)
    assert sorted(results["entrant"]) == ["human", "random"] and not results["fault"].any()
    assert results.set_index("entrant").loc["human", "decisions"] == decisions
    moves = json.loads(load_games(folder)["moves"].iloc[0])
    assert len(moves) == results["decisions"].sum()
    assert "result: seat 1 " in replay_text(folder, 0)
    scores = results.set_index("entrant")["score"]
    mine, theirs = int(scores["human"]), int(scores["random"])
    winner = results.loc[results["rank"] == 1, "entrant"]
    won = ("A tie" if len(winner) > 1 else "You won" if winner.iloc[0] == "human"
           else "random won") + (f" by {abs(mine - theirs)} point" if len(winner) == 1 else "")
    assert won in end and "Final scores: " in end and f"you {mine} (" in end, end
    assert f"random {theirs} (" in end and sorted(points) == sorted([mine, theirs])
    assert (f"Replay the last game: kdtourney replay {folder} 0 (or open its report, "
            f"{folder / 'index.html'}). Play again: kdtourney play --against random --no-browser "
            f"--out {folder}.") in end, end
    report = (folder / "index.html").read_text()
    assert 'id="replay-data"' in report and "Faults" in report


def run(*args):
    return CliRunner().invoke(main, ["play", *map(str, args), "--no-browser"])


def test_bad_input_is_one_line(tmp_path):
    for args, error in [
        (["--against", "nosuchbot"], "nosuchbot"),
        (["--against", "random", "--against", "random", "--against", "random", "--against",
          "greedy"], "--against: one to three bots (a table of two to four), not 4"),
        (["--against", "random", "--bot-memory", "100"], "--bot-memory limits sandboxed bots"),
        (["--against", "random", "--variant", "duel", "--against", "greedy"], "duel"),
    ]:
        result = run(*args, "--out", tmp_path / "x")
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.startswith("Error: ") and error in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1, result.stderr
        assert not (tmp_path / "x").exists()


@pytest.mark.slow
@pytest.mark.process
def test_ctrl_c_stops_and_stores_no_half_game(tmp_path):
    folder = tmp_path / "game"

    def playing():  # the store made and its block recorded: the game is on, waiting for you
        try:
            return len(load_blocks(folder)) == 1
        except StoreError:
            return False

    status, out, err = interrupt_when(
        [KDTOURNEY, "play", "--against", "random", "--seed", "1", "--out", folder, "--no-browser"],
        playing)
    assert status == 130, err
    assert err.strip() == (f"interrupted: the game being played is not stored; those that ended "
                           f"are in {folder}; play on with: kdtourney play --against random "
                           f"--no-browser --out {folder}")
    assert load_games(folder).empty
