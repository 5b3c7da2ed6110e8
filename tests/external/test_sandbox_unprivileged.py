"""An organiser who is not root runs a Python-bot contest under --sandbox: the served bot's
private folder is its own inside the sandbox (not the harness's, which the sandbox shows for the
files it gives), and a private folder another user made first is one line saying so and what to
do. Run as `nobody` through the system's Python of this version (root's venv lent to it)."""

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from kdtourney.engine.jit_cache import cache_folders

NOBODY = 65534
SYSTEM_PYTHON = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"
BOT = ("from kdtourney.bots.greedy import GreedyBot\n\n\nclass Honest(GreedyBot):\n"
       "    name = 'honest'\n")


@pytest.fixture
def unprivileged():
    """(a folder `nobody` may use, a command running kdtourney as `nobody` there)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None or shutil.which("bwrap") is None:
        pytest.skip("needs root (to become nobody), setpriv and bwrap")
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"no {SYSTEM_PYTHON}: nobody cannot run this venv's Python")
    work = Path(tempfile.mkdtemp(prefix="kdt-nobody-", dir="/tmp"))
    os.chmod(work, 0o777)
    venv = work / "venv"
    subprocess.run([SYSTEM_PYTHON, "-m", "venv", "--without-pip", venv], check=True)
    packages = sysconfig.get_paths()["purelib"]
    (next(venv.glob("lib/python3*/site-packages")) / "lent.pth").write_text(
        f"import site; site.addsitedir({packages!r})\n")
    (work / "tmp").mkdir(mode=0o1777)
    os.chmod(work / "tmp", 0o1777)
    (work / "bots").mkdir()
    (work / "bots" / "honest.py").write_text(BOT)
    for folder in cache_folders():  # compiled kernels, as an organiser who has run before has
        shutil.copytree(folder, work / "numba" / os.path.basename(folder))
    subprocess.run(["chmod", "-R", "a+rX", work], check=True)
    subprocess.run(["chmod", "-R", "a+rwX", work / "numba"], check=True)

    def kdtourney(*args, tmpdir=str(work / "tmp")):
        return subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             str(venv / "bin" / "python"), "-m", "kdtourney", *args, "--sandbox",
             "--sandbox-allow", sys.prefix, "--bots-dir", str(work / "bots")],
            capture_output=True, text=True, timeout=300, cwd=work,
            env=dict(os.environ, TMPDIR=tmpdir, HOME=str(work),
                     NUMBA_CACHE_DIR=str(work / "numba")))

    probe = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                            "--clear-groups", str(venv / "bin" / "python"), "-c",
                            "import kdtourney.cli"], capture_output=True, text=True)
    if probe.returncode != 0:
        shutil.rmtree(work)
        pytest.skip(f"nobody cannot import this kdtourney: {probe.stderr.splitlines()[-1:]}")
    yield work, kdtourney
    shutil.rmtree(work)


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.sandbox
def test_a_python_bot_plays_sandboxed_for_an_organiser_who_is_not_root(unprivileged):
    """In /tmp, the temporary folder of most organisers: the sandbox shows the harness's private
    folder there (the files it gives the bot), where the served bot once looked for its own."""
    work, kdtourney = unprivileged
    private = Path(f"/tmp/kdtourney-{NOBODY}")
    if private.exists() and (private.stat().st_uid != NOBODY or private.stat().st_mode & 0o077):
        pytest.skip(f"{private} is there already, not nobody's own")
    made = not private.exists()
    try:
        played = kdtourney("run", "--bots", "honest,random", "--games", "2", "--out",
                           str(work / "t"), "--no-report", "-q", tmpdir="/tmp")
        assert played.returncode == 0, played.stderr
        assert "2 games" in played.stdout
    finally:
        if made:
            shutil.rmtree(private, ignore_errors=True)


@pytest.mark.process
@pytest.mark.sandbox
def test_a_private_folder_made_first_by_another_user_is_one_line(unprivileged):
    work, kdtourney = unprivileged
    (work / "tmp" / f"kdtourney-{NOBODY}").mkdir(mode=0o755)  # root's: another user's
    refused = kdtourney("run", "--bots", "honest,random", "--games", "1", "--out",
                        str(work / "t"), "--no-report", "-q")
    assert refused.returncode == 2 and refused.stderr.splitlines() == [
        f"Error: {work / 'tmp' / f'kdtourney-{NOBODY}'} should be a folder of {NOBODY}'s only "
        "(mode 0700), kdtourney's private temporary folder, but is not (another user may have "
        "made it first): remove it, or set TMPDIR to a folder of your own"]
