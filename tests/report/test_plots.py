"""Plots (inline SVG from matplotlib) and kingdom pictures, on hand-made tables."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from kdtourney.engine import Game, Rules
from kdtourney.engine.tiles import CASTLE, FOREST, LAKE, MINE, WHEAT
from kdtourney.report import plots, svg

NAMES = ["alpha", "b$x^2$ <b>", "gamma_long_name_that_goes_on_and_on"]


def results_table(seed=0, games=60):
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(games):
        scores = rng.integers(0, 60, size=3) + np.array([10, 0, -5])
        order = np.argsort(-scores)
        ranks = np.empty(3, int)
        ranks[order] = np.arange(1, 4)
        for seat in range(3):
            e = NAMES[(seat + g) % 3]
            best_other = max(scores[o] for o in range(3) if o != seat)
            rows.append(dict(game=g, block=g // 3, seat=seat, n_players=3, entrant=e,
                             score=int(scores[seat]), rank=int(ranks[seat]),
                             win_share=float(ranks[seat] == 1),
                             margin=int(scores[seat] - best_other)))
    return pd.DataFrame(rows)


def parse(svg_text):
    """The SVG must be well-formed XML (it is inlined into HTML as is)."""
    return ET.fromstring(svg_text)


def all_plots():
    from kdtourney.stats.descriptive import by_seat, head_to_head
    from kdtourney.stats.ratings import bootstrap_elo, elo_history

    r = results_table()
    table = bootstrap_elo(r, n_boot=50)
    order = list(table.index)
    colors = plots.entrant_colors(order)
    h2h = head_to_head(r)
    seats = by_seat(r).reset_index()
    seats["lo"] = seats["win_share"] - 0.05
    seats["hi"] = seats["win_share"] + 0.05
    sprt = pd.DataFrame({"block": [1, 2, 3], "llr": [0.1, 0.5, 1.2], "lower": [-2.9] * 3,
                         "upper": [2.9] * 3, "elo": [10, 20, 30], "lo": [0, 5, 10],
                         "hi": [30, 35, 50]})
    return {
        "elo": plots.elo_plot(table, colors),
        "scores": plots.score_plot(r, order, colors),
        "margins": plots.margin_plot(r, order, colors),
        "h2h": plots.h2h_plot(h2h["score"].unstack(), h2h["meetings"].unstack()),
        "seats": plots.seat_plot(seats),
        "convergence": plots.convergence_plot(elo_history(r, points=5, n_boot=20), order, colors),
        "llr": plots.llr_plot(sprt),
    }


@pytest.fixture(scope="module")
def made():
    return all_plots()


def test_every_plot_is_accessible_inline_svg(made):
    for key, plot in made.items():
        text = plot.svg
        assert text.startswith("<svg") and text.endswith("</svg>"), key
        assert "<?xml" not in text and "<!DOCTYPE" not in text
        root = parse(text)
        assert root.get("role") == "img"
        head = text[: text.index(">")]
        assert " width=" not in head and " height=" not in head  # scales with the page
        title = root.find("{http://www.w3.org/2000/svg}title")
        assert title is not None and title.text and len(plot.alt) > 20
        # ids are prefixed so several plots can share one page without clashes
        for ident in re.findall(r'\bid="([^"]+)"', text):
            assert ident.startswith(f"{key}-"), (key, ident)
        for ref in re.findall(r"url\(#([^)]+)\)", text):
            assert ref.startswith(f"{key}-")


def test_plots_are_deterministic(made):
    again = all_plots()
    for key in made:
        assert made[key].svg == again[key].svg, key


def test_user_names_are_escaped_and_not_mathtext(made):
    text = made["scores"].svg
    assert "<b>" not in text and "&lt;b&gt;" in text
    assert "b$x^2$" in text  # dollar signs stay literal text, no mathtext parsing
    assert "\u2026" in text  # long names are shortened on the axes
    assert "gamma_long_name_that_goes_on_and_on" in made["scores"].alt  # but whole in the text


def test_alt_text_carries_the_numbers(made):
    assert "Elo" in made["elo"].alt and "alpha" in made["elo"].alt
    assert "fair share 33.3%" in made["seats"].alt
    assert "median" in made["scores"].alt


def test_short():
    assert plots.short("abc") == "abc"
    assert plots.short("x" * 40, 10) == "x" * 9 + "\u2026"


# ---- kingdoms --------------------------------------------------------------------------------


def test_kingdom_svg_draws_terrain_crowns_castle_and_frame():
    squares = {(0, 0): (CASTLE, 0), (0, 1): (WHEAT, 1), (0, 2): (FOREST, 0), (1, 0): (LAKE, 2),
               (-1, 0): (MINE, 3)}
    text = svg.kingdom_svg(squares, 5, label="Kingdom of <evil>")
    root = parse(text)
    assert root.get("viewBox") == "0 0 104 104"
    assert "<evil>" not in text and "Kingdom of &lt;evil&gt;" in text
    fills = re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="20" height="20" fill="([^"]+)"', text)
    assert sorted(fills) == sorted(svg.PALETTE[t] for t, _ in squares.values())
    assert text.count('fill="#fff7c2"') == 1 + 2 + 3  # crowns
    assert text.count('fill="#6b5b4b"') == 1  # the castle's tower
    assert 'stroke-dasharray="3 2"' in text  # the frame
    assert "4 squares of land and 6 crowns" in text
    seven = svg.kingdom_svg(squares, 7)
    assert parse(seven).get("viewBox") == "0 0 144 144"


def test_frame_holds_every_square_of_real_kingdoms():
    for players, variant in ((4, "standard"), (2, "duel")):
        rules = Rules(players=players, variant=variant)
        game = Game(rules, 3)
        rng = np.random.default_rng(1)
        while not game.is_over:
            legal = game.legal_actions()
            game.apply(legal[int(rng.integers(len(legal)))])
        for p in range(players):
            squares = game.kingdom(p).squares()
            top, left = svg.frame_origin(squares, rules.size)
            for r, c in squares:
                assert 0 <= r - top < rules.size and 0 <= c - left < rules.size
            text = svg.kingdom_svg(squares, rules.size)
            assert text.count('width="20" height="20"') == len(squares)
