"""The Numba versions kdtourney is tested with, checked before it patches Numba.

kdtourney changes Numba for the whole process: its cache locators (engine/jit_cache.py) and the
optimisation of a kernel's module (engine/jit.py), through Numba's internals, which change from one
version to the next. So before either patch (jit_cache checks first; jit imports it before its own
patch): an older Numba than the tested ones is refused (NumbaVersionError, one line, which the
command line prints as its error), a newer one is one logged warning line (a command's, not its
workers' fork server's too) and kdtourney goes on.
"""

import logging
import os
import re

import numba

TESTED = ((0, 68), (0, 68))  # the oldest and the newest (major, minor) the tests passed on
PIN = "numba==0.68.*"  # a tested version, for the messages
QUIET = "KDTOURNEY_NUMBA_QUIET"  # set: no warning (kdtourney.service.fork_server: its command
                                 # warns)

log = logging.getLogger(__name__)


class NumbaVersionError(ImportError):
    """The Numba installed is older than the versions kdtourney is tested with."""


def _shown(version: tuple) -> str:
    return ".".join(map(str, version))


def check(version: str | None = None) -> None:
    """Refuse a Numba (by default the one imported) older than TESTED, warn about a newer one."""
    version = numba.__version__ if version is None else version
    match = re.match(r"(\d+)\.(\d+)", version)
    if match is None:
        raise NumbaVersionError(f"kdtourney cannot read Numba's version {version!r}")
    found = tuple(int(part) for part in match.groups())
    oldest, newest = TESTED
    tested = _shown(oldest) if oldest == newest else f"{_shown(oldest)} to {_shown(newest)}"
    if found < oldest:
        raise NumbaVersionError(f"Numba {version} is older than the versions kdtourney is tested "
                                f"with ({tested}), whose internals it patches: pip install '{PIN}'")
    if found > newest and not os.environ.get(QUIET):
        log.warning(f"kdtourney: Numba {version} is newer than the versions kdtourney is tested "
                    f"with ({tested}); should its kernels fail to compile: pip install '{PIN}'")
