"""Helpers for the arena and `kdtourney run` tests: faulty bots, store comparison."""

import contextlib
import signal
import sqlite3
import subprocess
import textwrap
import time
from pathlib import Path

import pandas as pd

from kdtourney import store

FAULTY_BOTS = textwrap.dedent('''
    import os
    import time

    from kdtourney.bots.base import Bot


    class _Base(Bot):
        def setup(self, seat, rules, seed):
            self.seed = seed
            self.n = 0

        def act(self, view):
            self.n += 1
            return view.legal_actions()[0]

        def unlucky(self, every):
            # setup seeds are never 0 mod every in the warm-up (seed 0)
            return self.seed % every == 1


    class Raiser(_Base):
        """Raises at its 4th decision of one game in three."""
        name = "raiser"

        def act(self, view):
            if self.unlucky(3) and self.n == 3:
                raise RuntimeError("boom")
            return super().act(view)


    class Illegal(_Base):
        """Returns an illegal action at its 2nd decision of one game in three."""
        name = "illegal"

        def act(self, view):
            if self.unlucky(3) and self.n == 1:
                return 9999
            return super().act(view)


    class Slow(_Base):
        """Sleeps at its 3rd decision of one game in three."""
        name = "slow"

        def act(self, view):
            if self.unlucky(3) and self.n == 2:
                time.sleep(0.5)
            return super().act(view)


    class Crasher(_Base):
        """Kills its process (os._exit) at its 6th decision of one game in five."""
        name = "crasher"

        def act(self, view):
            if self.unlucky(5) and self.n == 5:
                os._exit(3)
            return super().act(view)


    class Vanisher(_Base):
        """Kills its process when it is freed, after its game (outside any bot call), in one game
        in seven."""
        name = "vanisher"

        def __del__(self):
            if getattr(self, "seed", 0) % 7 == 1:
                os._exit(4)


    class Closer(_Base):
        """Kills its process (os._exit) in close(), after the game is decided, in one game in
        five."""
        name = "closer"

        def close(self):  # also called on a bot made only to check its parameters
            if getattr(self, "seed", 0) % 5 == 1:
                os._exit(5)


    class Quitter(_Base):
        """Raises SystemExit in the warm-up's game (seed 0), KeyboardInterrupt at its 3rd decision
        of one game in three."""
        name = "quitter"

        def act(self, view):
            if self.seed == 0:
                raise SystemExit(0)
            if self.unlucky(3) and self.n == 2:
                raise KeyboardInterrupt
            return super().act(view)


    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no message")


    class Garbler(_Base):
        """Raises at its 2nd decision an exception whose message is not Unicode text (a lone
        surrogate) in one game in three, one whose message cannot be made in another."""
        name = "garbler"

        def act(self, view):
            if self.n == 1 and self.seed % 3 == 1:
                raise ValueError("bad name \\udc80")
            if self.n == 1 and self.seed % 3 == 2:
                raise Unprintable()
            return super().act(view)


    class Hanger(_Base):
        """Never answers its 6th decision of one game in eleven."""
        name = "hanger"

        def act(self, view):
            if self.unlucky(11) and self.n == 5:
                while True:
                    time.sleep(0.05)
            return super().act(view)
''')


MINE = textwrap.dedent('''
    from kdtourney.bots.random_bot import RandomBot


    class Mine(RandomBot):
        """Random, from a folder: the bot whose code a test changes."""
        name = "mine"
''')


def dawdler(seconds):
    """The source of `dawdler`: random, `seconds` per decision (a run that lasts)."""
    return textwrap.dedent(f'''
        import time

        from kdtourney.bots.random_bot import RandomBot


        class Dawdler(RandomBot):
            """Random, {seconds} s per decision."""
            name = "dawdler"

            def act(self, view):
                time.sleep({seconds})
                return super().act(view)
    ''')


def write_bot(folder, name, source):
    """`folder`/`name`.py holding `source`; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(source)
    return folder


def write_faulty_bots(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "faulty.py").write_text(FAULTY_BOTS)
    return folder


def comparable(folder, blocks=None):
    """The store's games, results and faults without timing columns, sorted: equal for the same
    tournament however it was run. `blocks`: only the games of the first that many blocks (an
    SPRT's counted ones; how far the chunk of its decision played on depends on timing)."""
    out = {}
    games = store.load_games(folder)
    if blocks is not None:
        games = games[games["block"] < blocks]
    for table, load in (("games", lambda _: games), ("results", store.load_results),
                        ("faults", store.load_faults)):
        df = load(folder)
        df = df[df["game"].isin(games["game"])]
        df = df.drop(columns=[c for c in store.TIMING_COLUMNS.get(table, ()) if c in df])
        keys = ["game", "seat"] if "seat" in df else ["game"]
        out[table] = df.sort_values(keys).reset_index(drop=True)
    return out


def assert_same_store(a, b, blocks=None):
    x, y = comparable(a, blocks), comparable(b, blocks)
    for table in x:
        pd.testing.assert_frame_equal(x[table], y[table], check_dtype=False, obj=table)


def snapshot(folder):
    """The bytes of a store after a checkpoint: to show that a refused command changed nothing."""
    path = Path(folder) / "tournament.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.read_bytes()


def default_ctrl_c():
    """preexec_fn of a command a test interrupts with SIGINT: Ctrl-C acts as in a terminal even
    when the tests run where SIGINT is ignored (a background job of a shell without job control,
    whose children inherit that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupt_when(command, ready, timeout: float = 60) -> tuple[int, str, str]:
    """Start `command` (Ctrl-C acting as in a terminal), press Ctrl-C once `ready()` holds, and
    return its (exit status, stdout, stderr); a command still running at the end is killed."""
    proc = subprocess.Popen([str(a) for a in command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_ctrl_c)
    try:
        deadline = time.monotonic() + timeout
        while not ready():
            if proc.poll() is not None:
                raise AssertionError(f"ended before it was interrupted: {proc.communicate()}")
            assert time.monotonic() < deadline, f"not ready to interrupt within {timeout} s"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out, err


def wait_stored(run, folder, games: int, timeout: float) -> None:
    """Wait until the store of `folder`, written by the running process `run`, holds `games`
    games; fail the test (with the process's output) if `run` ends or `timeout` s pass first."""
    deadline = time.monotonic() + timeout
    while stored(folder) < games:
        assert run.poll() is None, run.stdout.read()
        assert time.monotonic() < deadline, "no games stored"
        time.sleep(0.05)


def stored(folder):
    """Games in the store of `folder` so far (0 without one), read while a run writes it."""
    path = Path(folder) / "tournament.sqlite"
    if not path.exists():
        return 0
    try:
        reading = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        with contextlib.closing(reading) as conn:
            return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
