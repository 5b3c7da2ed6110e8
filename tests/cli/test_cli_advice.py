"""Every command kdtourney advises runs as printed and does what it says: the Ctrl-C line's, the
partial report's banner, the report's Reproduce command (the same games into a new folder)."""

import html
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from arena_support import assert_same_store, interrupt_when, stored

from kdtourney.report.advice import command_kind, reproduce_command, resume_advice, without
from kdtourney.store import load_games

BIN = Path(sys.executable).parent


def typed(command: str, cwd) -> subprocess.CompletedProcess:
    """`command` run as a user types it (kdtourney found where this venv keeps it)."""
    words = shlex.split(command)
    assert words[0] == "kdtourney", command
    return subprocess.run([str(BIN / "kdtourney"), *words[1:]], cwd=cwd, capture_output=True,
                          check=False, text=True, timeout=300)


def page_code(page: Path, element_id: str) -> str:
    """The text of the <code id=element_id> of a report page, unescaped."""
    found = re.search(rf'<code id="{element_id}">(.*?)</code>', page.read_text())
    assert found, f"no #{element_id} in {page}"
    return html.unescape(found.group(1))


@pytest.mark.slow
@pytest.mark.process
def test_the_ctrl_c_line_the_partial_banner_and_the_reproduce_command_run_as_printed(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the commands' reports/ folder is tmp_path's
    reports = Path("reports")
    command = ["run", "--bots", "random,greedy", "--games", "300", "--seed", "5", "--workers", "1"]

    def some_stored():
        return any(stored(f) >= 10 for f in reports.glob("*")) if reports.is_dir() else False

    status, _, err = interrupt_when([BIN / "kdtourney", *command], some_stored, timeout=120)
    assert status == 130, err
    (folder,) = reports.iterdir()
    advice = re.search(r"finish with: (.*)$", err.strip()).group(1)
    done = len(load_games(folder))
    assert 10 <= done < 300

    # the partial report says the same, and its advice finishes the tournament
    assert typed(f"kdtourney report {folder}", tmp_path).returncode == 0
    banner = page_code(folder / "index.html", "finish-command")
    assert banner == advice == f"kdtourney run --resume {folder}"
    finished = typed(banner, tmp_path)
    assert finished.returncode == 0, finished.stderr
    assert f"{folder / 'index.html'}: 300 games ({300 - done} played now)" in finished.stdout
    assert 'id="partial"' not in (folder / "index.html").read_text()

    # the finished report's Reproduce command deals the same games into a new folder
    reproduce = page_code(folder / "index.html", "reproduce-command")
    assert "--seed 5" in reproduce and "--out" not in reproduce
    again = typed(reproduce, tmp_path)
    assert again.returncode == 0, again.stderr
    (other,) = [f for f in reports.iterdir() if f != folder]
    assert_same_store(folder, other)


def test_the_advised_commands_quote_what_needs_it_and_drop_the_folder():
    meta = {"command": "kdtourney run --bots greedy,mcts:iterations=50 --out=my runs --games 8 "
                       "--name x --workers 2"}
    # the stored command line is words joined by spaces: `--out=my` is one, `runs` another
    config = {"meta": {"command": "__main__.py run --bots greedy,random --out 'a b' --seed 4"},
              "tournament": {"seed": 4}}
    assert reproduce_command(config) == "kdtourney run --bots greedy,random --seed 4"
    assert resume_advice(Path("reports/a b"), config) == "kdtourney run --resume 'reports/a b'"
    assert shlex.split(resume_advice(Path("reports/a b"), config))[-1] == "reports/a b"
    assert without(shlex.split(meta["command"])) == [
        "kdtourney", "run", "--bots", "greedy,mcts:iterations=50", "runs", "--games", "8",
        "--workers", "2"]
    play = {"meta": {"command": "kdtourney play --against greedy --seed 3 --out old"}}
    assert resume_advice(Path("p q"), play) == "kdtourney play --against greedy --out 'p q'"
    assert command_kind({"sprt": {}, "meta": meta}) == "sprt" and command_kind(play) == "play"
    # a --sandbox folder's deals are keyed with its store's secret: no command deals them again
    assert reproduce_command(dict(config, seed_secret="s")) is None
    assert reproduce_command({"meta": {"command": "pytest -q"}, "tournament": {"seed": 1}}) is None
