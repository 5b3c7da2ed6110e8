"""What a sandboxed bot reads of its sandbox's init: /proc/1/cmdline is bwrap's, whose options
(the binds: host paths of the harness, its venv and pools) come from a file, not its command
line (docs/sandbox.md, "What a sandboxed bot can still learn or do")."""

import os
import shutil
import subprocess
import sys

import pytest

from kdtourney.external import private
from kdtourney.external.declaration import Program
from kdtourney.external.sandbox import Sandbox


@pytest.mark.process
@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_the_sandbox_s_pid_1_shows_no_host_path_of_the_harness(tmp_path):
    program = Program(name="peek", command=("/bin/cat", "/proc/1/cmdline"), cwd=str(tmp_path),
                      origin=str(tmp_path / "peek.toml"))
    confined = Sandbox(hidden=(str(tmp_path / "tournament"),)).confine(program)
    try:
        argv = confined.argv()
        seen = subprocess.run(argv, capture_output=True, timeout=60)
    finally:
        confined.release()
    words = seen.stdout.decode().split("\0")
    assert words[1:4] == ["--args", "4", "--"], (words, seen.stderr)
    assert "/bin/cat" in words and "--ro-bind" not in words
    for host in (private.folder(), sys.prefix, "/sys/fs/cgroup", str(tmp_path)):
        assert not any(host in word for word in words), (host, words)
    options = [a for a in argv if a.startswith(private.folder("sandboxes"))]
    assert len(options) == 1 and not os.path.exists(options[0])  # removed once read
