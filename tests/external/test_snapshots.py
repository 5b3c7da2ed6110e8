"""A TOML bot's snapshot costs what its files hold: hashed and copied as they stream by, holes
kept, within the organiser's bounds, pruned when unused (kdtourney.external.identity)."""

import os
import tempfile
import time

import pytest

from kdtourney.external import load_toml
from kdtourney.external.files import LimitError, TooMany, files_sha256, submission_limits
from kdtourney.external.identity import program_files, prune_snapshots, snapshot


@pytest.fixture
def bot(tmp_path, monkeypatch):
    """A TOML bot in its own folder holding a 64 MiB sparse file and a few small ones, with the
    harness's private folder under tmp_path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    folder = tmp_path / "bots" / "sparse"
    (folder / "lib").mkdir(parents=True)
    (folder / "bot.toml").write_text('name = "sparse"\ncommand = ["./run"]\n')
    (folder / "run").write_text("#!/bin/sh\n")
    (folder / "lib" / "table.txt").write_text("1 2 3\n")
    with open(folder / "book.bin", "wb") as f:
        f.truncate(64 << 20)
        f.seek(1 << 20)
        f.write(b"data in the middle")
    return folder


def test_a_sparse_file_is_copied_with_its_holes_and_the_same_digest(bot):
    program = load_toml(bot / "bot.toml").program
    files = program_files(program)
    copy = snapshot(program)
    assert sorted(os.listdir(copy)) == ["book.bin", "bot.toml", "lib", "run"]
    copied = os.stat(os.path.join(copy, "book.bin"))
    assert copied.st_size == 64 << 20 and copied.st_blocks * 512 <= 4 << 20  # not inflated
    with open(os.path.join(copy, "book.bin"), "rb") as f:
        f.seek(1 << 20)
        assert f.read(18) == b"data in the middle"
    again = load_toml(bot / "bot.toml").program
    assert files_sha256((n, d) for n, d, _ in program_files(again)) == \
        files_sha256((n, d) for n, d, _ in files) and snapshot(again) == copy


def test_the_organiser_bounds_a_submission_s_files_and_bytes(bot, monkeypatch):
    program = load_toml(bot / "bot.toml").program
    monkeypatch.setenv("KDTOURNEY_SUBMISSION_FILES", "3")
    with pytest.raises(TooMany, match="more than 3 files and folders"):
        program_files(program)
    monkeypatch.setenv("KDTOURNEY_SUBMISSION_FILES", "100")
    monkeypatch.setenv("KDTOURNEY_SUBMISSION_MIB", "16")
    with pytest.raises(ValueError, match=r"book.bin holds 64.0 MiB, over the 16.0 MiB"):
        program_files(program)
    monkeypatch.setenv("KDTOURNEY_SUBMISSION_MIB", "lots")
    with pytest.raises(LimitError, match="KDTOURNEY_SUBMISSION_MIB='lots': a limit is a whole"):
        submission_limits()


def test_snapshots_unused_for_days_are_pruned_but_those_kept(bot):
    program = load_toml(bot / "bot.toml").program
    first = snapshot(program)
    (bot / "run").write_text("#!/bin/sh\n# version 2\n")
    second = snapshot(load_toml(bot / "bot.toml").program)
    assert first != second
    assert prune_snapshots() == []  # both used just now
    past = time.time() - 3 * 86400
    for folder in (first, second):
        os.utime(folder, (past, past))
    kept = os.path.basename(second)
    assert prune_snapshots(keep=[kept + "0" * 32]) == [os.path.basename(first)]
    assert not os.path.exists(first) and os.path.isdir(second)
