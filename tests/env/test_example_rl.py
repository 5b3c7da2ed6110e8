"""examples/rl: the training script trains and saves, and the bots-folder module plays in a
tournament, in-process and in its own process (KDTP) alike, as the README shows."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kdtourney.cli import main
from kdtourney.registry import BotRegistry
from kdtourney.store import load_results
from kdtourney.testing import check_bot

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rl"


@pytest.mark.process
def test_training_saves_weights_the_bot_loads(tmp_path):
    out = tmp_path / "w.npz"
    done = subprocess.run([sys.executable, str(EXAMPLE / "train.py"), "--iterations", "1",
                           "--games", "8", "--population", "2", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "iteration   0" in done.stdout and f"saved to {out}" in done.stdout
    registry = BotRegistry([EXAMPLE / "bots"], entry_points=False)
    bot = registry.bots["linear-rl"].cls
    assert np.load(out)["weights"].shape == bot(weights=str(out)).weights.shape
    with pytest.raises(FileNotFoundError, match="train it first"):
        bot(weights=str(tmp_path / "missing.npz"))


def test_the_committed_agent_passes_check_bot():
    registry = BotRegistry([EXAMPLE / "bots"], entry_points=False)
    check_bot(registry.bots["linear-rl"].cls, strict=True)


@pytest.mark.slow
@pytest.mark.process
def test_the_agent_plays_a_tournament_in_process_and_isolated_alike(tmp_path):
    stores = []
    for extra in ([], ["--isolate"]):
        out = tmp_path / f"t{len(stores)}"
        result = CliRunner().invoke(main, ["run", "--bots-dir", str(EXAMPLE / "bots"),
                                           "--bots", "linear-rl,random", "--players", "2",
                                           "--games", "4", "--seed", "3", "--workers", "1",
                                           "--no-report", "--quiet", "--out", str(out), *extra])
        assert result.exit_code == 0, result.output
        stores.append(load_results(out).sort_values(["game", "seat"])[["entrant", "score", "rank"]])
    assert len(stores[0]) == 8
    assert stores[0].reset_index(drop=True).equals(stores[1].reset_index(drop=True))
