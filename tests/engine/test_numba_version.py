"""kdtourney patches Numba's internals (engine/jit_cache.py, engine/jit.py): a Numba older than the
tested versions is refused before anything is patched, a newer one is one warning line."""

import logging
import os
import subprocess
import sys

import pytest

from kdtourney.engine import numba_version

# what importing the engine did: its refusal, and whether Numba was patched
_IMPORT_ENGINE = """
from numba.core import caching
from numba.core.codegen import CPUCodeLibrary

locators, optimize = list(caching.CacheImpl._locator_classes), CPUCodeLibrary._optimize_final_module
try:
    import kdtourney.engine  # noqa: F401
except ImportError as exc:
    print(f"{type(exc).__name__}: {exc}")
print("patched:", caching.CacheImpl._locator_classes != locators,
      CPUCodeLibrary._optimize_final_module is not optimize)
"""


# Numba reports `version`; its cache still takes the kernels compiled by the Numba installed (its
# index records the version: they would all compile again, and the cache be stamped `version`)
_NUMBA_REPORTS = """
import numba
from numba.core import caching

installed, numba.__version__ = numba.__version__, {version!r}
index_file = caching.IndexDataCacheFile.__init__


def same_cache(self, *args, **kwargs):
    index_file(self, *args, **kwargs)
    self._version = installed


caching.IndexDataCacheFile.__init__ = same_cache
"""


def reporting(version, tmp_path) -> dict:
    """An environment whose Python processes (a command's, its fork server's, its workers') see
    Numba report `version`."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_NUMBA_REPORTS.format(version=version))
    paths = [str(site), os.environ.get("PYTHONPATH")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, paths)))


def older(version):
    return (f"Numba {version} is older than the versions kdtourney is tested with (0.68), whose "
            "internals it patches: pip install 'numba==0.68.*'")


def newer(version):
    return (f"kdtourney: Numba {version} is newer than the versions kdtourney is tested with "
            "(0.68); should its kernels fail to compile: pip install 'numba==0.68.*'")


@pytest.mark.parametrize("version, verdict", [("0.68.0", None), ("0.68.1", None),
                                              ("0.67.1", older), ("0.59.1", older),
                                              ("0.69.0rc1", newer), ("1.0.0", newer)])
def test_the_tested_numbas_pass_older_ones_are_refused_newer_ones_warned_of(version, verdict,
                                                                            caplog):
    caplog.set_level(logging.WARNING, logger=numba_version.__name__)
    if verdict is older:
        with pytest.raises(numba_version.NumbaVersionError) as refused:
            numba_version.check(version)
        assert str(refused.value) == older(version)
    else:
        numba_version.check(version)
    warned = [record.getMessage() for record in caplog.records]
    assert warned == ([newer(version)] if verdict is newer else [])


@pytest.mark.process
def test_an_older_numba_is_refused_before_anything_is_patched_and_the_command_says_it_in_one_line(
        tmp_path):
    env = reporting("0.67.1", tmp_path)
    done = subprocess.run([sys.executable, "-c", _IMPORT_ENGINE], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.splitlines() == [f"NumbaVersionError: {older('0.67.1')}",
                                        "patched: False False"], done.stderr
    done = subprocess.run([sys.executable, "-m", "kdtourney", "bots"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"Error: {older('0.67.1')}\n")


@pytest.mark.slow
@pytest.mark.process
def test_a_newer_numba_is_one_warning_line_for_a_whole_run(tmp_path):
    env = reporting("0.69.0", tmp_path)
    done = subprocess.run([sys.executable, "-c", _IMPORT_ENGINE], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.splitlines() == ["patched: True True"], done.stderr
    # the command, its workers' fork server and its worker each import the engine
    done = subprocess.run([sys.executable, "-m", "kdtourney", "run", "--bots", "random,random",
                           "--games", "2", "--workers", "1", "--quiet", "--no-report", "--out",
                           tmp_path / "t"], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stderr) == (0, newer("0.69.0") + "\n")
