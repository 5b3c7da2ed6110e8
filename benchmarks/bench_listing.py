"""What `--sandbox`'s listing step costs: the registry asks every bot module of a folder what it
defines, each in a sandbox of its own, all at once (kdtourney.external.listing).

    python benchmarks/bench_listing.py [--modules 1,4] [--repeat 3]

For a bots folder of N modules (one plain bot each), the median wall time of building the registry
(`registry_s_N_...`) with the modules run in this process and listed in sandboxes, and of checking
one entrant with other values than its defaults (`check_s`: one more sandbox; a bot's defaults are
checked with the listing). Each listing is a Python process importing kdtourney and the module,
inside bwrap. Needs bwrap. Prints `name: value` lines; timings move with other work on the
machine.
"""

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kdtourney.external import Sandbox
from kdtourney.registry import BotRegistry
from kdtourney.registry.sandboxed import forget_listings

MODULE = '''
from kdtourney.bots.base import Bot


class Plain{n}(Bot):
    """Plays the first legal action."""
    name = "plain-{n}"

    def __init__(self, depth=2):
        self.depth = depth

    def act(self, view):
        return view.legal_actions()[0]
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", default="1,4", help="folder sizes (default 1,4)")
    parser.add_argument("--repeat", type=int, default=3, help="registries built per figure")
    args = parser.parse_args()
    if shutil.which("bwrap") is None:
        sys.exit("Error: needs bubblewrap (bwrap)")
    for n in (int(x) for x in args.modules.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(n):
                (Path(tmp) / f"plain{i}.py").write_text(MODULE.format(n=i))
            for label, sandbox in (("run_here", None), ("sandboxed", Sandbox())):
                walls = []
                for _ in range(args.repeat):
                    forget_listings()  # (a module whose files did not change is not asked again)
                    started = time.perf_counter()
                    registry = BotRegistry([tmp], env=False, cwd=False, entry_points=False,
                                           sandbox=sandbox)
                    walls.append(time.perf_counter() - started)
                    assert len(registry.bots) == 5 + n, registry.broken
                print(f"registry_s_{n}_{label}: {statistics.median(walls):.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "plain0.py").write_text(MODULE.format(n=0))
        registry = BotRegistry([tmp], env=False, cwd=False, entry_points=False, sandbox=Sandbox())
        walls = []
        for depth in range(args.repeat):
            started = time.perf_counter()
            registry.resolve(f"plain-0:depth={depth + 3}")
            walls.append(time.perf_counter() - started)
        print(f"check_s: {statistics.median(walls):.2f}")


if __name__ == "__main__":
    main()
