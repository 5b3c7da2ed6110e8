"""The person's games (`kdtourney play`, kdtourney.commands.play) without a browser: the person's
seat answered from another thread as the page's server answers it, the bots owned by the harness
as in a tournament: a KDTP bot too slow for the clock forfeits, sandboxed or not, at a table of two
or three, and the game is stored as a run stores one."""

from __future__ import annotations

import shutil
import threading

import pytest
from kdtp_support import SANDBOX_ALLOW, write_fake_bots

from kdtourney.commands.folders import session_meta
from kdtourney.commands.play import Board, lineup, play_games
from kdtourney.match.settings import PlaySettings
from kdtourney.registry import BotRegistry
from kdtourney.store import load_faults, load_games, load_results
from kdtourney.terminal.replay import replay_text


def person(board: Board, done: threading.Event) -> threading.Thread:
    """Answers every question of `board` with its first legal move, checked by the engine."""
    def answer():
        version = -1
        while not done.is_set():
            state = board.state(version, timeout=0.5)
            version, ask = state["version"], state.get("ask")
            if ask:
                move = ({"claim": ask["claims"][0]} if ask["claims"] else
                        {"discard": True} if ask["discard"] else {"place": ask["places"][0]})
                assert board.answer(move, version) is None
                assert board.answer(move, version) == "it is not your turn"  # once only

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    return thread


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
@pytest.mark.parametrize("sandbox, against", [(False, ["late", "random"]), (True, ["late"])])
def test_a_kdtp_bot_over_its_clock_forfeits_to_the_person(tmp_path, sandbox, against):
    if sandbox and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    bots = write_fake_bots(tmp_path / "bots", ["late"], at=3, late=5.0)
    play = PlaySettings(sandbox=sandbox, sandbox_allow=SANDBOX_ALLOW if sandbox else ())
    registry = BotRegistry([bots], env=False, cwd=False,
                           sandbox=play.sandbox_for(tmp_path / "game"))
    table = lineup(registry, against, games=1, seed=5, move_time_limit=2.0)  # ms for the person
    board, done = Board(), threading.Event()
    answering = person(board, done)
    try:
        stored = play_games(table, tmp_path / "game", registry, board, play=play,
                            meta=session_meta("game", [bots]))
    finally:
        done.set()
        answering.join()
    assert stored == 1
    results = load_results(tmp_path / "game").set_index("entrant")
    assert sorted(results.index) == sorted(["human", *against])
    assert not results.loc["human", "fault"] and results.loc["late", "rank"] == len(results)
    faults = load_faults(tmp_path / "game")
    assert faults[["entrant", "kind"]].values.tolist() == [["late", "timeout"]]
    assert board.state()["result"]["ranks"] == load_results(tmp_path / "game")["rank"].tolist()
    assert load_games(tmp_path / "game")["game"].tolist() == [0]
    assert f"late rank {len(results)}" in replay_text(tmp_path / "game", 0)
