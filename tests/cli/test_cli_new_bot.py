"""`kdtourney new-bot NAME`: a minimal bot folder, Python or (--kdtp) a program in its own process,
that passes check_bot and plays at once; bad names and existing folders are one-line errors that
write nothing."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdtourney.cli import main
from kdtourney.testing import check_bot

KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")


def new_bot(*args):
    return CliRunner().invoke(main, ["new-bot", *args])


@pytest.mark.slow
@pytest.mark.process
def test_a_python_bot_passes_check_bot_and_its_own_check_says_so(tmp_path):
    result = new_bot("my-bot")
    assert result.exit_code == 0, result.output
    module = tmp_path / "bots" / "my-bot" / "my_bot.py"
    assert f"wrote {Path('bots/my-bot/my_bot.py')}" in result.output
    assert "kdtourney run --bots-dir bots --bots my-bot,greedy,random" in result.output
    assert check_bot("my-bot", bots_dirs=["bots"], strict=True).games == 24
    assert check_bot("my-bot:explore=0.5", bots_dirs=["bots"], strict=True).ok
    # the check the output names: the module run as a script
    own = subprocess.run([sys.executable, str(module)], capture_output=True, text=True, timeout=120)
    assert own.returncode == 0, own.stderr
    assert own.stdout.strip() == "check_bot(MyBot): 24 games, no problems"


@pytest.mark.process
def test_a_kdtp_bot_passes_check_bot_in_its_own_process(tmp_path):
    result = new_bot("theirs", "--kdtp", "--bots-dir", "folder")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "folder" / "theirs").iterdir()) == \
        ["theirs.py", "theirs.toml"]
    check = check_bot("theirs", bots_dirs=["folder"], strict=True)
    assert check.games == 24 and check.bot == "theirs"
    assert "check_bot('theirs', bots_dirs=['folder'])" in result.output


@pytest.mark.slow
@pytest.mark.process
def test_both_play_in_a_tournament(tmp_path):
    assert new_bot("mine").exit_code == 0
    assert new_bot("theirs", "--kdtp").exit_code == 0
    run = subprocess.run([KDTOURNEY, "run", "--bots-dir", "bots", "--bots", "mine,theirs",
                          "--games", "4", "--seed", "1", "--workers", "1", "--out", "t", "-q",
                          "--no-report"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(tmp_path / "t" / "tournament.sqlite") as db:
        faults = db.execute("SELECT count(*) FROM results WHERE fault != 0").fetchone()[0]
        games = db.execute("SELECT count(DISTINCT game) FROM results").fetchone()[0]
    assert (games, faults) == (4, 0)


@pytest.mark.parametrize("args, message", [
    (["greedy"], "Error: there is a bot named greedy already: choose another name"),
    (["9lives"], "Error: bad bot name '9lives': start with a letter"),
    (["my bot"], "Error: bad bot name 'my bot'"),
    (["json", "--kdtp"], "Error: json: its module json.py would hide Python's module json"),
])
def test_a_bad_name_is_one_line_and_writes_nothing(tmp_path, args, message):
    result = new_bot(*args)
    assert result.exit_code == 2
    assert result.output.startswith(message) and result.output.count("\n") == 1
    assert not (tmp_path / "bots").exists()


def test_an_existing_folder_is_never_overwritten(tmp_path):
    folder = tmp_path / "bots" / "mine"
    folder.mkdir(parents=True)
    (folder / "mine.py").write_text("# my work\n")
    result = new_bot("mine")
    assert result.exit_code == 2
    assert result.output == f"Error: {Path('bots/mine')} already exists: choose another name, " \
                            "or remove it first\n"
    assert (folder / "mine.py").read_text() == "# my work\n"
