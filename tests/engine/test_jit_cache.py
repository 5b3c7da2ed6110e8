"""Numba caches kdtourney's kernels in the user's cache folder, never inside the installed package:
pip does not know such files, and left behind by an uninstall they hide a later editable install."""

import os

import pytest

import kdtourney
from kdtourney.bots import _kernels as BK
from kdtourney.engine import _kernels as K
from kdtourney.engine import warm_up


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_the_kernels_are_cached_outside_the_package():
    warm_up()
    package = os.path.dirname(os.path.abspath(kdtourney.__file__)) + os.sep
    for kernel in (K.init_game, K.apply_action, BK.playout):
        folder = os.path.abspath(kernel._cache.cache_path)
        assert not folder.startswith(package), folder
    names = os.listdir(K.init_game._cache.cache_path)
    assert any(n.startswith("_kernels.init_game-") and n.endswith(".nbi") for n in names), names
