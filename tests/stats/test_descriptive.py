"""Tests for kdtourney.stats.descriptive on a tiny hand-made results table (values computed by
hand)."""

import numpy as np
import pandas as pd
import pytest

from kdtourney.stats.descriptive import (
    block_bootstrap_means,
    by_player_count,
    by_seat,
    entrant_summary,
    head_to_head,
    head_to_head_matrix,
)

COLUMNS = [
    "game", "block", "n_players", "seat", "entrant", "score", "rank", "win_share", "margin",
    "largest_territory", "crowns", "discards", "fault", "time_total", "time_max",
]  # fmt: skip


@pytest.fixture
def results():
    rows = [
        # block 0: two 2-player games (A wins, then a tie)
        (0, 0, 2, 0, "A", 30, 1, 1.0, 10, 9, 5, 0, 0, 1.0, 0.5),
        (0, 0, 2, 1, "B", 20, 2, 0.0, -10, 7, 4, 1, 0, 2.0, 0.4),
        (1, 0, 2, 0, "B", 25, 1, 0.5, 0, 8, 4, 0, 0, 2.0, 0.6),
        (1, 0, 2, 1, "A", 25, 1, 0.5, 0, 8, 4, 2, 0, 2.0, 0.9),
        # block 1: one 3-player game, C forfeits (ranked last)
        (2, 1, 3, 0, "A", 40, 1, 1.0, 5, 12, 6, 0, 0, 3.0, 0.2),
        (2, 1, 3, 1, "B", 35, 2, 0.0, -5, 10, 6, 1, 0, 4.0, 1.5),
        (2, 1, 3, 2, "C", 10, 3, 0.0, -30, 3, 1, 3, 1, 0.5, 0.5),
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def test_entrant_summary_hand_values(results):
    s = entrant_summary(results, n_boot=400, seed=1)
    assert list(s.index) == ["A", "B", "C"]
    a, b, c = s.loc["A"], s.loc["B"], s.loc["C"]
    assert (a["games"], b["games"], c["games"]) == (3, 3, 1)
    assert (a["blocks"], c["blocks"]) == (2, 1)
    assert a["wins"] == 2.5 and b["wins"] == 0.5 and c["wins"] == 0.0
    assert a["win_share"] == pytest.approx(2.5 / 3)
    assert a["score"] == pytest.approx(95 / 3)
    assert b["score"] == pytest.approx(80 / 3)
    assert a["margin"] == pytest.approx(5.0)
    assert b["margin"] == pytest.approx(-5.0)
    # A's scores 25, 30, 40: linear quantiles
    assert a["score_q05"] == pytest.approx(25.5)
    assert a["score_q25"] == pytest.approx(27.5)
    assert a["score_q50"] == pytest.approx(30.0)
    assert a["score_q95"] == pytest.approx(39.0)
    assert a["discards"] == pytest.approx(2 / 3)
    assert c["discards"] == 3
    assert a["crowns"] == pytest.approx(5.0)
    assert a["rank"] == pytest.approx(1.0)
    assert (a["faults"], b["faults"], c["faults"]) == (0, 0, 1)
    assert c["fault_rate"] == 1.0
    assert a["time_total"] == pytest.approx(2.0)
    assert a["time_max"] == pytest.approx(0.9)
    assert b["time_max"] == pytest.approx(1.5)


def test_entrant_summary_block_bootstrap_intervals(results):
    # Two blocks: a resample is {0,0}, {0,1} or {1,1}.  For A, win share is .75, .833 or 1 and score
    # 27.5, 31.67 or 40; the 2.5% / 97.5% percentiles are the extremes (each has probability 1/4).
    s = entrant_summary(results, n_boot=400, seed=1)
    a = s.loc["A"]
    assert a["win_share_lo"] == pytest.approx(0.75)
    assert a["win_share_hi"] == pytest.approx(1.0)
    assert a["score_lo"] == pytest.approx(27.5)
    assert a["score_hi"] == pytest.approx(40.0)
    # C plays in one block only: every resample that contains it gives the same mean.
    c = s.loc["C"]
    assert c["score_lo"] == c["score_hi"] == c["score"] == 10
    no_boot = entrant_summary(results, n_boot=0)
    assert no_boot["score_lo"].isna().all()
    assert no_boot.loc["A", "score"] == pytest.approx(95 / 3)


def test_block_bootstrap_means_coverage_on_simulated_blocks():
    # Blocks with a shared random effect: a naive per-row interval would be too narrow; the block
    # bootstrap should cover the true mean about 95% of the time.
    rng = np.random.default_rng(0)
    hits = 0
    n_rep = 200
    for _ in range(n_rep):
        n_blocks, per = 40, 4
        block = np.repeat(np.arange(n_blocks), per)
        x = rng.normal(0, 1, n_blocks)[block] + rng.normal(0, 1, n_blocks * per)
        out = block_bootstrap_means(pd.DataFrame({"x": x}), np.zeros(len(x)), block, n_boot=300,
                                    seed=int(rng.integers(1 << 30)))["x"]  # fmt: skip
        hits += bool(out["lo"].iloc[0] <= 0.0 <= out["hi"].iloc[0])
    assert 0.88 <= hits / n_rep <= 0.99, hits / n_rep


def test_head_to_head(results):
    h = head_to_head(results)
    ab = h.loc[("A", "B")]
    assert (ab["wins"], ab["ties"], ab["losses"], ab["meetings"]) == (2, 1, 0, 3)
    assert ab["score"] == pytest.approx(2.5 / 3)
    assert h.loc[("B", "A"), "score"] == pytest.approx(0.5 / 3)
    assert h.loc[("A", "C"), "meetings"] == 1 and h.loc[("A", "C"), "score"] == 1.0
    assert h.loc[("C", "B"), "score"] == 0.0
    assert len(h) == 6  # every ordered pair of different entrants met
    m = head_to_head_matrix(results)
    assert m.loc["A", "B"] == pytest.approx(2.5 / 3)
    assert np.isnan(m.loc["A", "A"])
    meet = head_to_head_matrix(results, "meetings")
    assert meet.loc["B", "A"] == 3


def test_head_to_head_self_play_excluded():
    df = pd.DataFrame({"game": [0, 0, 0], "block": 0, "seat": [0, 1, 2],
                       "entrant": ["A", "A", "B"], "rank": [1, 3, 2]})
    h = head_to_head(df)
    assert h.loc[("A", "B"), "meetings"] == 2
    assert h.loc[("A", "B"), "score"] == 0.5
    assert ("A", "A") not in h.index


def test_by_seat(results):
    s = by_seat(results)
    assert s.loc[(2, 0), "win_share"] == pytest.approx(0.75)
    assert s.loc[(2, 0), "score"] == pytest.approx(27.5)
    assert s.loc[(2, 1), "win_share"] == pytest.approx(0.25)
    assert s.loc[(2, 1), "score"] == pytest.approx(22.5)
    assert s.loc[(3, 2), "score"] == 10 and s.loc[(3, 2), "faults"] == 1
    assert s["games"].sum() == len(results)


def test_by_player_count(results):
    p = by_player_count(results)
    assert p.loc[("A", 2), "games"] == 2
    assert p.loc[("A", 2), "win_share"] == pytest.approx(0.75)
    assert p.loc[("A", 3), "score"] == 40
    assert p.loc[("B", 2), "margin"] == pytest.approx(-5.0)
    assert p.loc[("C", 3), "rank"] == 3
