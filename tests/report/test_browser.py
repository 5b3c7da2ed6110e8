"""The report in a real browser: headless Chromium loads the page from disk and runs its script, and
the test reads the outcome from the dumped DOM (the game viewer driven step by step:
test_watch.py).

Skipped, saying why, when Chromium is not installed (`apt-get install chromium`; `.ci/run` does it).
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess

import pytest
from pool_support import simulate

from kdtourney.report.html import write_report
from kdtourney.report.pool import rating_list
from kdtourney.report.pool_html import write_rating_list

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             "/usr/bin/chromium") if p and os.path.exists(p)), None)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium); "
                             "the report's browser test needs it")


def dump_dom(path, tmp_path, fragment=""):
    """The DOM after the page's scripts ran, as Chromium serialises it."""
    profile = tmp_path / "chromium-profile"
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-extensions", "--mute-audio",
            f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom",
            path.resolve().as_uri() + fragment]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def body_attributes(dom):
    tag = re.search(r"<body\b([^>]*)>", dom).group(1)
    return {k: html.unescape(v) for k, v in re.findall(r'([\w-]+)="([^"]*)"', tag)}


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.browser
@pytest.mark.parametrize("name", ["four", "dynasty", "duel", "single"])
def test_page_runs_and_shows_a_game(tournaments, tmp_path, name):
    path = write_report(tournaments(name), n_boot=100)
    dom = dump_dom(path, tmp_path)
    body = body_attributes(dom)
    assert "data-errors" not in body, body.get("data-errors")
    assert body.get("data-ready") == "ok", "the page's script did not finish"
    # the viewer drew the first game's start: a castle per kingdom, the first row of dominoes
    assert dom.count('class="sq"') >= 2 and 'class="domino"' in dom
    assert re.search(r'<output id="rp-pos"[^>]*>0 / \d+</output>', dom)


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.browser
def test_rating_list_page_runs_and_sorts(tmp_path):
    simulate(tmp_path / "runs" / "a", {"greedy": 0, "random": -300, "mine": 100}, blocks=12)
    simulate(tmp_path / "runs" / "b", {"greedy": 0, "mine": 150}, blocks=12, code={"mine": "v2"})
    path = write_rating_list(rating_list([tmp_path / "runs"], n_boot=100), tmp_path / "page")
    dom = dump_dom(path, tmp_path)
    body = body_attributes(dom)
    assert body.get("data-ready") == "ok" and "data-errors" not in body, body
    # the script made the list's headings sortable
    table = re.search(r'<table[^>]*id="list-table".*?</thead>', dom, re.S).group(0)
    assert table.count('aria-sort="none"') == table.count("<th ")


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.browser
def test_ladder_page_runs_and_shows_a_game(tmp_path):
    from click.testing import CliRunner

    from kdtourney.cli import main

    out = tmp_path / "ladder"
    result = CliRunner().invoke(main, ["ladder", "--bots", "random,greedy", "--games", "8",
                                       "--seed", "2", "--workers", "1", "--out", str(out), "-q"])
    assert result.exit_code == 0, result.output
    dom = dump_dom(out / "index.html", tmp_path, "#replay-3")
    body = body_attributes(dom)
    assert "data-errors" not in body, body.get("data-errors")
    assert body.get("data-ready") == "ok", body
    assert re.search(r'<output id="rp-pos"[^>]*>0 / \d+</output>', dom)
    assert re.search(r'<span id="rp-title"[^>]*>Game 3: ', dom)
    table = re.search(r'<table[^>]*id="ladder-list".*?</thead>', dom, re.S).group(0)
    assert table.count('aria-sort="none"') == table.count("<th ")
