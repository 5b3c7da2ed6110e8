"""As root, each live sandbox of the machine has a uid of its own, whatever the temporary folder
of the harness that made it (a TMPDIR, systemd's PrivateTmp): two harnesses at once never hand
out the same uid (kdtourney.external.sandbox.own_uid)."""

import os
import subprocess
import sys

import pytest

HOLD = ("import sys\nfrom kdtourney.external.sandbox import own_uid\n"
        "uid, fd = own_uid()\nprint(uid, flush=True)\nsys.stdin.read()\n")


@pytest.mark.process
@pytest.mark.skipif(os.geteuid() != 0, reason="a sandbox has a uid of its own only as root")
def test_two_harnesses_with_different_temporary_folders_hold_different_uids(tmp_path):
    harnesses = []
    try:
        for name in ("one", "two"):
            (tmp_path / name).mkdir()
            harnesses.append(subprocess.Popen(
                [sys.executable, "-c", HOLD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                text=True, env=dict(os.environ, TMPDIR=str(tmp_path / name))))
            harnesses[-1].uid = int(harnesses[-1].stdout.readline())  # held from now on
        assert harnesses[0].uid != harnesses[1].uid
    finally:
        for harness in harnesses:
            harness.communicate("")
