"""A game's hang inside an in-process bot's decision is that bot's forfeit on every run, never a
failed game: `kdtourney run` from the command line with a bot that sleeps 30 s in a decision."""

import textwrap

import pytest
from click.testing import CliRunner

from kdtourney.cli import main
from kdtourney.store import load_faults, load_games

pytestmark = [pytest.mark.slow, pytest.mark.process]

SLEEPER = textwrap.dedent('''
    import time

    from kdtourney.bots.random_bot import RandomBot


    class Sleeper(RandomBot):
        """Random, but sleeps 30 s in its third decision of the games whose seed is odd (not in
        the warm-up's, seed 0)."""
        name = "sleeper"

        def setup(self, seat, rules, seed):
            super().setup(seat, rules, seed)
            self.seed, self.decisions = seed, 0

        def act(self, view):
            self.decisions += 1
            if self.seed % 2 and self.decisions == 3:
                time.sleep(30)
            return super().act(view)
''')


def run_hanging(tmp_path, bot: str, source: str, games: int, workers: int, env=None):
    """`kdtourney run` of `bot` (its module `source`) against random, 1 s a move, seed 4;
    (the result, the tournament's folder)."""
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / f"{bot}.py").write_text(source)
    folder = tmp_path / "t"
    result = CliRunner().invoke(main, ["run", "--bots", f"{bot},random", "--games", str(games),
                                       "--seed", "4", "--workers", str(workers),
                                       "--move-time-limit", "1", "--bots-dir", str(bots),
                                       "--out", str(folder), "--no-report"], env=env)
    assert result.exit_code == 0, result.output
    return result, folder


def test_a_bot_sleeping_in_a_decision_forfeits_every_game_it_hangs(tmp_path):
    """Each game the bot sleeps in hangs its worker twice (past its 1 s, the 0.2 s margin and 2 s)
    and is played again with the bot forfeiting at that decision; none is stored as failed."""
    result, folder = run_hanging(tmp_path, "sleeper", SLEEPER, games=6, workers=2)
    assert result.stdout.splitlines()[-1] == f"{folder}: 6 games, 2 faults", result.output
    games, faults = load_games(folder), load_faults(folder)
    # seed 4: the sleeper's seed is odd in games 1 and 2, which the two workers play at once
    assert len(games) == 6 and set(games["status"]) == {"ok", "fault"}
    assert sorted(faults["game"]) == [1, 2] and set(faults["entrant"]) == {"sleeper"}
    assert set(faults["kind"]) == {"timeout"} and set(faults["call"]) == {4}
    assert faults["message"].str.startswith("the worker hung during this bot's call 4 ").all()


WANDERER = textwrap.dedent('''
    import os
    import time
    from pathlib import Path

    from kdtourney.bots.random_bot import RandomBot


    class Wanderer(RandomBot):
        """Random, but in the games whose seed is odd sleeps 30 s in its third decision the first
        two times the game is played, in its second after (a replay that took another course)."""
        name = "wanderer"

        def setup(self, seat, rules, seed):
            super().setup(seat, rules, seed)
            self.seed, self.decisions = seed, 0
            if seed % 2:
                plays = Path(os.environ["WANDERER_PLAYS"]) / str(seed)
                with open(plays, "a") as f:
                    f.write("x")
                self.sleep_at = 3 if plays.stat().st_size <= 2 else 2

        def act(self, view):
            self.decisions += 1
            if self.seed % 2 and self.decisions == self.sleep_at:
                time.sleep(30)
            return super().act(view)
''')


def test_a_bot_hanging_earlier_in_a_replay_forfeits_there_not_a_failed_game(tmp_path):
    """The game is played again after each hang; its third play hangs at an earlier decision than
    the two before, where the bot was made to forfeit. That hang is the bot's too: it forfeits
    at that decision (before, the game was stored as failed after four losses)."""
    plays = tmp_path / "plays"
    plays.mkdir()
    result, folder = run_hanging(tmp_path, "wanderer", WANDERER, games=2, workers=1,
                                 env={"WANDERER_PLAYS": str(plays)})
    assert result.stdout.splitlines()[-1] == f"{folder}: 2 games, 1 faults", result.output
    faults = load_faults(folder)
    assert list(faults["entrant"]) == ["wanderer"] and list(faults["call"]) == [3]
    assert faults["message"].item().startswith("the worker hung during this bot's call 3 ")
