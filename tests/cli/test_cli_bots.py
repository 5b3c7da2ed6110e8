"""`kdtourney bots`: the listing, broken modules, and one-line errors with exit status 2;
`kdtourney serve`."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kdtourney.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "bots"
CROWN = EXAMPLES / "crown-grabber" / "crown_grabber.py"  # a bot in a folder of its own
KDTOURNEY = str(Path(sys.executable).parent / "kdtourney")


def bots(*args):
    return CliRunner().invoke(main, ["bots", *args])


def test_lists_random_with_its_origin():
    result = bots()
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:1] == ["random"])
    assert "Uniform over the legal actions." in lines[at]
    assert lines[at + 1].strip() == "from: built-in"


def test_lists_folder_bots_with_parameters_and_broken_modules(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "broken.py").write_text("import nowhere_to_be_found_kdt\n")
    result = bots("--bots-dir", str(EXAMPLES), "--bots-dir", "mine")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "crown-grabber" in out and "Claims the free domino with the most crowns" in out
    assert f"from: {CROWN}" in out
    assert "parameters: prefer_high=true" in out
    assert "broken module(s):" in out
    assert ("  mine/broken.py: ModuleNotFoundError: No module named 'nowhere_to_be_found_kdt' "
            "(line 1)" in out.splitlines())


def test_cwd_bots_folder_is_listed_relative(tmp_path):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "crown.py").write_text(CROWN.read_text())
    result = bots()
    assert result.exit_code == 0 and "from: bots/crown.py" in result.output


def test_missing_folder_is_one_line_and_exit_2():
    result = bots("--bots-dir", "no/such/folder")
    assert result.exit_code == 2
    assert result.output == "Error: bots folder 'no/such/folder' does not exist\n"


def test_duplicate_name_is_one_line_and_exit_2(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "crown.py").write_text(CROWN.read_text())
    result = bots("--bots-dir", "a", "--bots-dir", "b")
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: two bots are named 'crown-grabber': ")
    assert str(tmp_path / "a" / "crown.py") in lines[0] \
        and str(tmp_path / "b" / "crown.py") in lines[0]


def test_lists_external_bots_with_their_command(tmp_path):
    folder = tmp_path / "ext"
    folder.mkdir()
    (folder / "here.toml").write_text(f'name = "here"\ncommand = ["{sys.executable}", "bot.py"]\n'
                                      'description = "Plays in its own process"\n')
    (folder / "gone.toml").write_text('name = "gone"\ncommand = ["./not-built"]\n[options]\n'
                                      'depth = 2\n')
    (folder / "bad.toml").write_text('name = "bad"\n')
    result = bots("--bots-dir", "ext")
    assert result.exit_code == 0, result.output
    lines = [line.strip() for line in result.output.splitlines()]
    at = next(i for i, line in enumerate(lines)  # the name column is as wide as the longest name
              if line.split(None, 1) == ["here", "Plays in its own process"])
    assert lines[at + 1:at + 3] == ["from: ext/here.toml",
                                    f"command: {sys.executable} bot.py (found)"]
    assert "command: ./not-built (NOT FOUND)" in lines and "parameters: depth=2" in lines
    assert 'ext/bad.toml: no command: write command = ["./mybot", "--an-argument"]' in lines


@pytest.mark.slow
@pytest.mark.process
def test_serve_from_the_command_line():
    hello = b'{"type": "hello", "protocol": "kdtp", "version": 1}\n{"type": "quit"}\n'
    done = subprocess.run([KDTOURNEY, "serve", "mcts:iterations=5"], input=hello,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == "mcts:iterations=5"
    done = subprocess.run([KDTOURNEY, "serve", "nobot"], input=b"", capture_output=True,
                          timeout=120)
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().startswith("Error: unknown bot 'nobot'; available: ")
    assert done.stderr.count(b"\n") == 1


@pytest.mark.process
def test_a_served_bot_that_prints_keeps_the_protocol(tmp_path):
    """What a bot's code prints (at import, in act) goes to stderr: standard output is KDTP's."""
    from kdtourney.engine import Game, Rules
    from kdtourney.external import kdtp

    (tmp_path / "chatty.py").write_text(
        "from kdtourney.bots import Bot\n\nprint('loading chatty')\n\n"
        "class Chatty(Bot):\n    name = 'chatty'\n\n"
        "    def act(self, view):\n        print('thinking...')\n"
        "        return view.legal_actions()[0]\n")
    rules = Rules(2)
    view = Game(rules, 5).view(Game(rules, 5).current_player)
    lines = [kdtp.encode(kdtp.hello()), kdtp.encode(kdtp.game_message(0, view.player, rules, 1, {},
                                                                      None)),
             kdtp.act_line(view, view.legal_actions(), None), kdtp.encode(kdtp.quit_message())]
    done = subprocess.run([KDTOURNEY, "serve", "chatty", "--bots-dir", str(tmp_path)],
                          input=b"".join(lines), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["type"] for a in answers] == ["hello", "action"]
    assert b"loading chatty" in done.stderr and b"thinking..." in done.stderr


@pytest.mark.process
def test_a_flat_bot_importing_an_unlisted_sibling_is_one_error_line_at_start(tmp_path):
    folder = tmp_path / "flat"
    (folder / "wlib").mkdir(parents=True)
    (folder / "wlib" / "__init__.py").write_text("PICK = 0\n")
    (folder / "wbot.py").write_text(CROWN.read_text().replace("from kdtourney.bots import Bot",
                                                              "import wlib\nfrom kdtourney.bots "
                                                              "import Bot"))
    result = CliRunner().invoke(main, ["run", "--bots-dir", str(folder), "--bots",
                                       "crown-grabber,random", "--games", "2",
                                       "--out", str(tmp_path / "t")])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert result.output.startswith("Error: unknown bot 'crown-grabber'") and \
        'it imports wlib, which lies beside it but is not in its KDTOURNEY_FILES: add "wlib" to ' \
        'KDTOURNEY_FILES' in result.output
    assert not (tmp_path / "t").exists()
