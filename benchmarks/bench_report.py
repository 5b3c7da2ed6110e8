"""The report of a large tournament, every game of which its game viewer holds: the page's size, the
time to build it, and the time headless Chromium takes to open it from disk and show a game.

    python benchmarks/bench_report.py [--folder DIR] [--games 10000] [--players 2]

Plays the tournament once (`kdtourney run --bots random,greedy`, the fastest bots, into DIR, by
default a temporary folder), or reuses `--folder DIR` if it holds one. Then runs `kdtourney report
DIR` in a fresh process (its wall and CPU time), times the replays alone in this process, and with
Playwright and Chromium (the test extra; `apt-get install chromium`) opens the page from disk:
the time until its script is done (parsing the page and the games' data, drawing the first
game), and, timed in the page, to draw another game picked by its number and to list an
entrant's games in order of score. Prints `name: value` lines.

On a machine shared with other work the wall times move a lot; the CPU time is the steadier figure.
"""

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kdtourney.report.page import replay_view
from kdtourney.store import exists, load_config, load_games, load_results


def kdtourney(*args) -> tuple[float, float]:
    """Run the command in a fresh process: (wall, CPU) seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "kdtourney", *map(str, args)], check=True,
                   stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (time.perf_counter() - t0,
            after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)


def browse(path: Path) -> dict:
    """Seconds Chromium takes to open the page from disk (the page parsed and its script done:
    the games' data parsed, the first game drawn), then, timed in the page, to show the last game
    by its number and to list an entrant's games by score."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from browser_support import CHROMIUM, CHROMIUM_ARGS
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(path.resolve().as_uri())
        page.wait_for_selector("body[data-ready=ok]", timeout=120_000)
        times = page.evaluate("""() => {
          const $ = id => document.getElementById(id),
                change = e => e.dispatchEvent(new Event("change"));
          const nav = performance.getEntriesByType("navigation")[0];
          const games = JSON.parse($("replay-data").textContent).games;
          let t = performance.now();
          $("rp-number").value = String(games[games.length - 1][0]);
          $("rp-show").click();
          const show = performance.now() - t;
          t = performance.now();
          $("rp-entrant").selectedIndex = 1; change($("rp-entrant"));
          $("rp-order").value = "high"; change($("rp-order"));
          return {open_s: nav.domContentLoadedEventEnd / 1000, show_game_s: show / 1000,
                  list_by_score_s: (performance.now() - t) / 1000,
                  errors: document.body.getAttribute("data-errors")};
        }""")
        browser.close()
    if times.pop("errors"):
        raise SystemExit("the page's script failed")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--players", type=int, default=2)
    args = parser.parse_args()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="bench-report-")) / "t"
    if not exists(folder):
        wall, _ = kdtourney("run", "--bots", "random,greedy", "--players", args.players,
                            "--games", args.games, "--seed", 1, "--out", folder, "-q",
                            "--no-report")
        print(f"play_s: {wall:.1f}")
    games = load_games(folder)
    print(f"games: {len(games)}")
    print(f"players: {','.join(map(str, sorted(games['n_players'].unique())))}")
    wall, cpu = kdtourney("report", folder)
    path = folder / "index.html"
    print(f"report_wall_s: {wall:.2f}")
    print(f"report_cpu_s: {cpu:.2f}")
    t0 = time.perf_counter()
    view = replay_view(games, load_results(folder), load_config(folder)["tournament"]["rules"])
    print(f"replays_s: {time.perf_counter() - t0:.2f}")
    print(f"page_mb: {path.stat().st_size / 1e6:.2f}")
    print(f"viewer_data_mb: {len(str(view['replay'])) / 1e6:.2f}")
    print(f"bytes_per_game: {len(str(view['replay'])) / view['replay_count']:.0f}")
    try:
        for name, value in browse(path).items():
            print(f"{name}: {value:.2f}")
    except ImportError:
        print("browser: skipped (Playwright is not installed: pip install -e '.[test]')")


if __name__ == "__main__":
    main()
