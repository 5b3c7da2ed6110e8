"""The harness's private temporary folder (kdtourney.external.private)."""

import errno
import os
import tempfile
from pathlib import Path

import pytest

from kdtourney.external import private


def test_the_harness_s_temporary_files_are_in_a_folder_of_its_own_not_through_a_link(
        tmp_path, monkeypatch):
    """Another user of a shared /tmp cannot lay the harness's private folder, or a file in it,
    as a link to make it write elsewhere, nor leave it open to others."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    place = tmp_path / f"{private.PREFIX}{os.geteuid()}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    place.symlink_to(elsewhere)
    with pytest.raises(private.NotPrivate, match="should be a folder of"):
        private.folder("cpus")
    place.unlink()
    place.mkdir(mode=0o755)
    place.chmod(0o755)
    with pytest.raises(private.NotPrivate):
        private.folder("cpus")
    place.chmod(0o700)
    made = Path(private.folder("cpus"))
    assert made.parent == place and made.stat().st_mode & 0o777 == 0o700
    (made / "0").symlink_to(tmp_path / "target")
    with pytest.raises(OSError) as refused:
        private.open_file(str(made / "0"))
    assert refused.value.errno == errno.ELOOP and not (tmp_path / "target").exists()
    assert list(elsewhere.iterdir()) == []
