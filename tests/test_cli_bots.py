"""`kdtourney bots`: the listing, broken modules, and one-line errors with exit status 2."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from kdtourney.cli import main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "bots"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.delenv("KDTOURNEY_BOTS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)


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
    assert f"from: {EXAMPLES / 'crown_grabber.py'}" in out
    assert "parameters: prefer_high=true" in out
    assert "broken module(s):" in out
    assert ("  mine/broken.py: ModuleNotFoundError: No module named 'nowhere_to_be_found_kdt' (line 1)"
            in out.splitlines())


def test_cwd_bots_folder_is_listed_relative(tmp_path):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "crown.py").write_text((EXAMPLES / "crown_grabber.py").read_text())
    result = bots()
    assert result.exit_code == 0 and "from: bots/crown.py" in result.output


def test_missing_folder_is_one_line_and_exit_2():
    result = bots("--bots-dir", "no/such/folder")
    assert result.exit_code == 2
    assert result.output == "Error: bots folder 'no/such/folder' does not exist\n"


def test_duplicate_name_is_one_line_and_exit_2(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "crown.py").write_text((EXAMPLES / "crown_grabber.py").read_text())
    result = bots("--bots-dir", "a", "--bots-dir", "b")
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: two bots are named 'crown-grabber': ")
    assert str(tmp_path / "a" / "crown.py") in lines[0] and str(tmp_path / "b" / "crown.py") in lines[0]
