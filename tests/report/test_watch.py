"""Any stored game can be watched in the report: the page's game viewer, in headless Chromium,
shows at every step exactly the position the engine reached (kingdoms square by square, scores,
both rows with their owners and what was placed), and a game can be picked by its number, from an
entrant's games or from the faults table, and played automatically.

The page updates after the event an action causes (a link sets the hash, and the page opens the
game on the hashchange that follows), so every read after an action is Playwright's `expect`,
which waits until the page shows what is expected."""

from __future__ import annotations

import re

import pytest
from evil_support import EVIL_ENTRANT

from kdtourney.engine import Game
from kdtourney.report.html import write_report
from kdtourney.store import load_config, load_faults, load_games, load_results
from kdtourney.store.deals import rules_for, stored_deals

expect = pytest.importorskip("playwright.sync_api", reason="the browser tests need Playwright (pip "
                             "install -e '.[test]')").expect
WAIT = 30_000  # ms an expectation waits for the page, as long as an action does (a busy machine)

pytestmark = [pytest.mark.slow, pytest.mark.process, pytest.mark.browser]

# what the page shows at every step, read from its DOM while its own Next button steps the game
SHOWN = """() => {
  const out = [], last = +document.getElementById("rp-slider").max;
  document.getElementById("rp-start").click();
  for (let k = 0; k <= last; k++) {
    out.push({
      seats: [...document.querySelectorAll("#rp-kingdoms li")].map(li => ({
        squares: [...li.querySelectorAll("rect.sq")].map(r => r.dataset.square).sort(),
        score: +li.querySelector(".pts").dataset.score})),
      rows: [...document.querySelectorAll("#rp-rows .row")].map(row =>
        [...row.querySelectorAll("svg.domino")].map(s => [+s.dataset.domino, +s.dataset.owner,
                                                          +s.dataset.placed]))});
    document.getElementById("rp-next").click();
  }
  return out;
}"""


def engine_steps(folder, game):
    """What the engine reached at each step of stored game `game`: the start of each deal, then
    after each action, in the form SHOWN gives."""
    row = load_games(folder).set_index("game").loc[game]
    rules = rules_for(load_config(folder)["tournament"]["rules"], int(row["n_players"]))
    steps = []

    def seen(g):
        steps.append({
            "seats": [{"squares": sorted(f"{r} {c} {t} {k}" for (r, c), (t, k)
                                         in g.kingdom(p).squares().items()),
                       "score": g.scores()[p]} for p in range(rules.players)],
            "rows": [[[d, o, int(placed)] for (d, o), placed in zip(g.current_row, g.placed)],
                     [[d, o, 0] for d, o in g.new_row]]})

    for seed, actions in stored_deals(row):
        g = Game(rules, seed)
        seen(g)
        for action in actions:
            g.apply(action)
            seen(g)
    return steps


def open_game(page, path, game):
    # on a page already open only the hash changes: the page opens the game on the hashchange
    page.goto(path.resolve().as_uri() + f"#replay-{game}")
    page.wait_for_selector("body[data-ready=ok]")
    expect(page.locator("#rp-number")).to_have_value(str(game), timeout=WAIT)


@pytest.mark.parametrize("name", ["four", "three", "dynasty", "duel"])
def test_the_viewer_shows_what_the_engine_reached(tournaments, page, name):
    folder = tournaments(name)
    path = write_report(folder, n_boot=20)
    games = load_games(folder, ["game"])["game"].tolist()
    faulted = sorted(set(load_faults(folder)["game"]))
    for game in dict.fromkeys([games[-1], *faulted[:1]]):  # the last game, and one with a fault
        open_game(page, path, game)
        shown = page.evaluate(SHOWN)
        expected = engine_steps(folder, game)
        assert len(shown) == len(expected), f"{name}, game {game}: steps"
        for k, (a, b) in enumerate(zip(shown, expected)):
            assert a == b, f"{name}, game {game}, step {k}"


def test_a_game_is_found_by_number_entrant_or_fault_and_plays_by_itself(tournaments, page):
    folder = tournaments("three")
    path = write_report(folder, n_boot=20)
    page.clock.install(time=0)
    page.goto(path.resolve().as_uri())
    page.wait_for_selector("body[data-ready=ok]")
    page.clock.pause_at(3600)  # from now on the page's timers run when the test says: no race
    title, number = page.locator("#rp-title"), page.locator("#rp-number")

    page.fill("#rp-number", "4")
    page.press("#rp-number", "Enter")
    expect(title).to_have_text(re.compile("^Game 4: "), timeout=WAIT)
    page.fill("#rp-number", "999")
    page.click("#rp-show")
    expect(title).to_have_text(re.compile("^There is no game 999"), timeout=WAIT)

    # an entrant's games, its best first: the list is the store's, in that order
    results = load_results(folder)
    evil = results[results["entrant"] == EVIL_ENTRANT].sort_values(["score", "game"],
                                                                   ascending=[False, True])
    page.click("#rp-finder summary")
    page.select_option("#rp-entrant", label=EVIL_ENTRANT)
    page.select_option("#rp-order", "high")
    listed = [str(g) for g in evil["game"]]
    links = page.locator("#rp-list tbody a.replay-link")
    expect(links).to_have_text(listed, timeout=WAIT)
    links.first.click()
    expect(number).to_have_value(listed[0], timeout=WAIT)

    # a fault's game, from the faults table
    faulted = load_faults(folder).sort_values(["game", "seat"]).iloc[0]
    page.locator("#faults-table a.replay-link").first.click()
    expect(number).to_have_value(str(faulted["game"]), timeout=WAIT)
    expect(title).to_contain_text("forfeit", timeout=WAIT)

    # autoplay: the game plays to its end and stops there
    last = int(page.locator("#rp-slider").get_attribute("max"))
    page.select_option("#rp-speed", "250")
    page.click("#rp-play")
    expect(page.locator("#rp-play")).to_have_attribute("aria-pressed", "true", timeout=WAIT)
    page.clock.run_for(250 * (last // 2))
    expect(page.locator("#rp-pos")).to_have_text(f"{last // 2} / {last}", timeout=WAIT)
    page.clock.run_for(250 * last)
    expect(page.locator("#rp-pos")).to_have_text(f"{last} / {last}", timeout=WAIT)
    expect(page.locator("#rp-play")).to_have_attribute("aria-pressed", "false", timeout=WAIT)
