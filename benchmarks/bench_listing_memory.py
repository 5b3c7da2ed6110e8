"""The peak memory of `--sandbox`'s listing step for a folder of many bot modules: each is
listed in a sandbox of its own, a few at once (kdtourney.external.listing.at_once).

    python benchmarks/bench_listing_memory.py [--modules 40]

Builds the registry of a bots folder of N one-module submissions under --sandbox, sampling
every 0.1 s the summed RSS of this process's descendants (the listings and their sandboxes).
Prints `name: value` lines: at_once, the peak (`peak_mib`) and the wall time (`s`); the time
moves with other work on the machine. Needs bwrap.
"""

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from kdtourney.external import Sandbox
from kdtourney.external.listing import at_once
from kdtourney.registry import BotRegistry

MODULE = ("from kdtourney.bots.base import Bot\n\n\nclass Plain{n}(Bot):\n"
          "    name = 'plain-{n}'\n\n    def act(self, view):\n"
          "        return view.legal_actions()[0]\n")


def descendants_rss(root: int) -> int:
    """The summed RSS (bytes) of the processes below `root`."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
        rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
    total, todo = 0, [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            total += rss.get(child, 0)
            todo.append(child)
    return total


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=40)
    args = parser.parse_args()
    if shutil.which("bwrap") is None:
        sys.exit("Error: needs bubblewrap (bwrap)")
    peak, done = [0], threading.Event()

    def sample():
        while not done.wait(0.1):
            peak[0] = max(peak[0], descendants_rss(os.getpid()))

    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.modules):
            (Path(tmp) / f"plain{i}.py").write_text(MODULE.format(n=i))
        sampler = threading.Thread(target=sample)
        sampler.start()
        started = time.perf_counter()
        registry = BotRegistry([tmp], env=False, cwd=False, entry_points=False,
                               sandbox=Sandbox(), startup_timeout=60)
        wall = time.perf_counter() - started
        done.set()
        sampler.join()
    listed = sum(1 for info in registry.bots.values() if info.origin.startswith(tmp))
    print(f"at_once: {at_once()}")
    print(f"modules_listed: {listed} of {args.modules}")
    print(f"peak_mib: {peak[0] / (1 << 20):.0f}")
    print(f"s: {wall:.1f}")
    print(f"load: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
