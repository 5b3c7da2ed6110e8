"""The HTML report built from real (small) tournaments: sections, escaping, offline, CLI."""

from __future__ import annotations

import html
import json
import re
import sqlite3

import pytest
from click.testing import CliRunner
from evil_support import EVIL_MESSAGE, EVIL_TEXT

from kdtourney.cli import main
from kdtourney.errors import UserError
from kdtourney.report.html import ReportError, build_context, parse_anchor, write_report
from kdtourney.report.page import name_tokens, render
from kdtourney.store import load_entrants, load_games, open_store, store_path

ALL = ["two", "three", "four", "duel", "mixed", "dynasty", "single", "partial"]

# every page has these; pages with results (all of ours) have the rest
ALWAYS = ["standings", "faults", "reproducibility", "identities-table"]
WITH_RESULTS = ["ratings", "convergence", "scores", "score-plot", "margins", "entrants", "seats",
                "seat-plot", "seat-table", "kingdoms", "replay", "replay-data", "rp-number",
                "rp-slider", "rp-start", "rp-prev", "rp-play", "rp-next", "rp-end", "rp-list",
                "intervals-note"]
WITH_RATINGS = ["los", "elo-plot", "head-to-head", "h2h-plot", "h2h-table"]


@pytest.fixture(scope="module")
def pages(tournaments):
    built = {}

    def get(name):
        if name not in built:
            path = write_report(tournaments(name), n_boot=200)
            built[name] = path.read_text(encoding="utf-8")
        return built[name]

    return get


def ids(page):
    return set(re.findall(r'\bid="([^"]+)"', page))


@pytest.mark.process
@pytest.mark.parametrize("name", ALL)
def test_page_has_every_section(pages, name):
    page = pages(name)
    found = ids(page)
    expected = ALWAYS + WITH_RESULTS + ([] if name == "single" else WITH_RATINGS)
    missing = [i for i in expected if i not in found]
    assert not missing, f"{name}: sections missing: {missing}"
    for heading in ("Standings", "Ratings", "Scores and margins", "Entrants in detail",
                    "Seats and player counts", "Kingdoms", "Replay", "Faults", "Reproducibility"):
        assert f">{heading}</h2>" in page, heading
    # every section in the table of contents points to an element of the page
    for target in re.findall(r'<nav class="toc".*?</nav>', page, re.S)[0].split('href="#')[1:]:
        assert target.split('"')[0] in found
    assert page.count("<h1>") == 1
    assert page.rstrip().endswith("</html>")


@pytest.mark.process
@pytest.mark.parametrize("name", ALL)
def test_page_is_offline_and_its_data_parse(pages, tournaments, name):
    page = pages(name)
    # nothing fetched from anywhere: no remote src/href, no CSS imports or remote url()
    assert not re.search(r'(?:src|href|action|poster|data)\s*=\s*["\']?\s*(?:https?:)?//', page,
                         re.I)
    assert not re.search(r"url\(\s*['\"]?\s*(?:https?:)?//", page, re.I)
    assert "@import" not in page
    assert not re.search(r"<(?:link|iframe|object|embed|img)\b", page, re.I)
    assert "default-src 'none'" in page  # and the CSP forbids any fetch a later change might add
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", page, re.S)
    assert all("src=" not in attrs for attrs, _ in scripts)
    data = json.loads(re.search(r'<script type="application/json" id="replay-data">(.*?)</script>',
                                page, re.S).group(1))
    # every stored game is in the viewer, replayed
    stored = load_games(tournaments(name), ["game"])["game"].tolist()
    assert [record[0] for record in data["games"]] == stored
    assert all(record[7] and record[9] is None for record in data["games"])


@pytest.mark.process
def test_user_text_is_escaped_everywhere(pages):
    for name in ("four", "three", "mixed"):
        page = pages(name)
        assert EVIL_TEXT not in page, f"{name}: raw <script> from an entrant label"
        assert "<img" not in page, f"{name}: raw fault message"
        assert html.escape(EVIL_TEXT, quote=False) in page  # shown, as text
        assert "onerror=alert(2)" in page  # the fault message is shown, escaped
        assert html.escape(EVIL_MESSAGE, quote=False) in page or \
            html.escape(EVIL_MESSAGE) in page
    # the only <script> elements are the page's own two
    page = pages("four")
    assert len(re.findall(r"<script\b", page)) == 2


@pytest.mark.process
def test_content_for_each_tournament_kind(pages):
    duel = pages("duel")
    assert 'viewBox="0 0 144 144"' in duel and 'viewBox="0 0 104 104"' not in duel  # 7x7 frames
    assert "Mighty Duel" in duel
    four = pages("four")
    assert 'viewBox="0 0 104 104"' in four
    assert four.count('<tr>\n        <td class="num">') == 3  # three entrants in the standings
    assert "No faults" not in four and 'id="faults-table"' in four
    assert "No faults" in pages("two")
    mixed = pages("mixed")
    assert 'id="player-count-table"' in mixed and "2 players" in mixed and "4 players" in mixed
    assert 'id="player-count-table"' not in four
    dynasty = pages("dynasty")
    assert "dynasties of three deals" in dynasty and "<h4>Deal 3</h4>" in dynasty
    single = pages("single")
    assert "One entrant plays every seat" in single and 'id="elo-plot"' not in single
    partial = pages("partial")
    assert 'id="partial"' in partial and "5 of 12 planned games" in partial
    assert 'id="partial"' not in four


@pytest.mark.process
def test_partial_block_and_empty_store(tournaments, tmp_path):
    # a tournament whose store holds no game yet still gives a page that says so
    folder = tournaments("two")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "tournament.sqlite").write_bytes(store_path(folder).read_bytes())
    with sqlite3.connect(store_path(empty)) as conn:
        for table in ("results", "faults", "games"):
            conn.execute(f"DELETE FROM {table}")
    page = write_report(empty, n_boot=50).read_text()
    assert 'id="empty"' in page and 'id="standings"' in page and 'id="reproducibility"' in page


@pytest.mark.process
def test_standings_numbers_match_the_ratings(tournaments):
    from kdtourney.stats.ratings import fit_elo
    from kdtourney.store import load_results

    folder = tournaments("four")
    ctx = build_context(folder, n_boot=100)
    elo = fit_elo(load_results(folder))
    assert [r["name"] for r in ctx["standings"]] == list(elo.index)
    for row in ctx["standings"]:
        assert row["elo"] == pytest.approx(elo[row["name"]])
        assert row["elo_lo"] <= row["elo"] + 1e-9 and row["elo"] <= row["elo_hi"] + 1e-9
        assert 0 <= row["win_share"] <= 1
    anchored = build_context(folder, anchor="greedy=1500", n_boot=100)
    greedy = next(r for r in anchored["standings"] if r["name"] == "greedy")
    assert greedy["elo"] == pytest.approx(1500)
    assert "anchored at greedy" in render(anchored)


def test_parse_anchor():
    assert parse_anchor(None) is None
    assert parse_anchor("greedy=0") == ("greedy", 0.0)
    assert parse_anchor("mcts:c=0.7=1200") == ("mcts:c=0.7", 1200.0)  # the last '=' splits
    assert parse_anchor(("a", "3")) == ("a", 3.0)
    for bad in ("greedy", "=3", "greedy=x", "greedy=nan"):
        with pytest.raises(ReportError):
            parse_anchor(bad)
    assert issubclass(ReportError, UserError)  # the command line's one-line error, exit 2


@pytest.mark.process
def test_plots_are_stable(tournaments):
    folder = tournaments("two")
    a = build_context(folder, n_boot=100)
    b = build_context(folder, n_boot=100)
    assert a["plots"].keys() == b["plots"].keys()
    for key in a["plots"]:
        assert a["plots"][key].svg == b["plots"][key].svg, key
    assert a["replay"] == b["replay"]


@pytest.mark.process
def test_cli_report(tournaments, tmp_path):
    folder = tournaments("two")
    runner = CliRunner()
    result = runner.invoke(main, ["report", str(folder), "--anchor", "random=0"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("index.html")
    assert "anchored at random" in (folder / "index.html").read_text()
    for args, needle in ((["report", str(folder), "--anchor", "nobody=3"], "nobody"),
                         (["report", str(folder), "--anchor", "random"], "NAME=VALUE"),
                         (["report", str(tmp_path / "nothing")], "no tournament")):
        result = runner.invoke(main, args)
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: ") and needle in lines[0]
        assert "Traceback" not in result.output


@pytest.mark.process
def test_sprt_hook_draws_the_llr_path(tournaments, tmp_path):
    """Issue 7 will store an `sprt` table; the page draws its LLR path when it is there."""
    folder = tmp_path / "sprt"
    folder.mkdir()
    (folder / "tournament.sqlite").write_bytes(store_path(tournaments("two")).read_bytes())
    assert 'id="sprt"' not in write_report(folder, n_boot=50).read_text()
    with sqlite3.connect(store_path(folder)) as conn:
        conn.execute("CREATE TABLE sprt (block INTEGER, llr REAL, lower REAL, upper REAL, "
                     "elo REAL, lo REAL, hi REAL)")
        conn.executemany("INSERT INTO sprt VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [(b, 0.3 * b, -2.94, 2.94, 40.0, 10.0, 70.0) for b in range(1, 5)])
    page = write_report(folder, n_boot=50).read_text()
    assert 'id="sprt"' in page and 'id="llr-plot"' in page and 'href="#sprt"' in page
    assert "log-likelihood ratio" in page


@pytest.mark.process
def test_reproducibility_shows_what_code_played(pages, tournaments):
    page = pages("three")
    table = page[page.index('id="identities-table"'):]
    table = table[:table.index("</table>")]
    entrants = load_entrants(tournaments("three"))
    assert len(entrants) == 3 and entrants["digest"].str.fullmatch("[0-9a-f]{12}").all()
    for row in entrants.itertuples():
        assert f"<th scope=\"row\">{name_tokens(row.entrant)}</th><td><code>{row.digest}</code>" \
            in table
        assert row.identity["source_sha256"] in table


@pytest.mark.process
def test_the_reproducibility_text_of_a_sandboxed_folder_says_a_new_folder_deals_other_games(
        tournaments, tmp_path):
    """A --sandbox folder keys its seeds with a secret of its store: the same command into a new
    folder deals other games, so the page must not promise that it replays them."""
    folder = tmp_path / "keyed"
    folder.mkdir()
    (folder / "tournament.sqlite").write_bytes(store_path(tournaments("two")).read_bytes())
    plain = " ".join(write_report(folder, n_boot=20).read_text().split())
    assert "replay every game exactly" in plain and 'id="keyed-seeds"' not in plain
    with open_store(folder) as st:
        st.seed_secret(create=True)
    page = " ".join(write_report(folder, n_boot=20).read_text().split())
    assert "replay every game exactly" not in page
    assert (f"Resuming this folder (<code>kdtourney run --resume {folder}</code>) deals the same "
            "games; the same command into a new folder makes a new secret and deals other games"
            ) in page
    assert 'id="reproduce-command"' not in page
