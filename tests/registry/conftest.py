"""The registry's tests see no KDTOURNEY_BOTS_DIR from outside, work in a folder without ./bots,
and of the built-ins only `random` (the search bots are tested on their own)."""

import pytest

from kdtourney.registry import discovery


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No KDTOURNEY_BOTS_DIR from outside; a working directory without ./bots; of the built-ins
    only `random` (the search bots are tested on their own)."""
    monkeypatch.delenv("KDTOURNEY_BOTS_DIR", raising=False)
    monkeypatch.setattr(discovery, "BUILTIN_MODULES", ("kdtourney.bots.random_bot",))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work
