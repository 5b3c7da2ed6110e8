"""The registry's tests work in a folder without ./bots and of the built-ins see only `random`
(the search bots are tested on their own); no test sees KDTOURNEY_BOTS_DIR from outside
(tests/conftest.py)."""

import pytest

from kdtourney.registry import discovery


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """A working directory without ./bots; of the built-ins only `random` (the search bots are
    tested on their own)."""
    monkeypatch.setattr(discovery, "BUILTIN_MODULES", ("kdtourney.bots.random_bot",))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work
