"""What a TOML bot's files cost the harness: its identity (every file hashed) and its sandbox's
snapshot (kdtourney.external.identity), for two tiny submissions of issue 52.

    python benchmarks/bench_snapshots.py [--files 200000] [--mib 1000]

`sparse`: a 1000 MiB sparse file (a few KiB on disk); `many`: 200,000 empty files, once under the
default bound on a bot's files (refused) and once with KDTOURNEY_SUBMISSION_FILES raised past it.
Each case runs in a fresh process: its peak RSS (`rss_mib`), wall time (`s`), and the snapshot's
disk use (`disk_kib`, from st_blocks) and entries (`inodes`). Prints `name: value` lines; times
move with other work on the machine (note `uptime`).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CASE = r"""
import json, os, resource, sys, time
from kdtourney.external import load_toml
from kdtourney.external.identity import program_files, snapshot
started = time.perf_counter()
try:
    copy = snapshot(load_toml(sys.argv[1]).program)
    blocks = inodes = 0
    for folder, dirs, files in os.walk(copy):
        for name in dirs + files:
            st = os.lstat(os.path.join(folder, name))
            blocks, inodes = blocks + st.st_blocks, inodes + 1
    out = {"disk_kib": blocks // 2, "inodes": inodes}
except Exception as exc:
    out = {"refused": str(exc)[-90:]}
out.update(s=round(time.perf_counter() - started, 2),
           rss_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1))
print(json.dumps(out))
"""


def bot(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(f'name = "{name}"\ncommand = ["./run"]\n')
    (folder / "run").write_text("#!/bin/sh\n")
    return folder / "bot.toml"


def run(toml: Path, tmp: str, **env) -> dict:
    done = subprocess.run([sys.executable, "-c", CASE, str(toml)], capture_output=True, text=True,
                          env=dict(os.environ, TMPDIR=tmp, **env), check=True)
    return json.loads(done.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200_000)
    parser.add_argument("--mib", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        tmp = os.path.join(work, "tmp")
        os.mkdir(tmp)
        sparse = bot(Path(work, "sparse"), "sparse")
        with open(sparse.parent / "book.bin", "wb") as f:
            f.truncate(args.mib << 20)
        many = bot(Path(work, "many"), "many")
        for i in range(args.files):
            (many.parent / f"f{i}").touch()
        cases = {"sparse": run(sparse, tmp),
                 "many_default": run(many, tmp),
                 "many_raised": run(many, tmp, KDTOURNEY_SUBMISSION_FILES=str(args.files + 10))}
        for case, figures in cases.items():
            for key, value in figures.items():
                print(f"{case}_{key}: {value}")
        print(f"load: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
