"""A command's folder: where it is, what it says of the run, and the checks of what it holds.

    asked_folder, new_folder   the folder given (--out, --name), or a new one under reports/
    stored_seed, stored_bots_dirs, check_entrants, resume_command   what a re-run or --resume
                               reads of a folder
    session_meta               what the store keeps of the command line and the versions
    check_code, record_play    an existing folder is played by the same code, the same way
    read_config, check_existing   what a folder holds, and that a command may go on with it
    record_harness_error       a bug's trace into FOLDER/logs/harness.log

Each raises ArenaError (one line) for a folder that cannot be used.
"""

from __future__ import annotations

import datetime
import os
import platform
import sys
import traceback
from pathlib import Path

import numba
import numpy

from kdtourney import __version__, store
from kdtourney.match.settings import CONFIG_KEY as PLAY_KEY
from kdtourney.match.settings import PlaySettings, settle, stored_settings
from kdtourney.registry import EntrantError
from kdtourney.tournament.definition import ArenaError, Tournament, default_name

REPORTS = Path("reports")  # where new tournament folders go (relative to the working directory)
LOGS = "logs"              # the entrants' stderr logs, in the tournament folder
HARNESS_LOG = "harness.log"  # in LOGS: the traces of kdtourney's own errors


def command_line() -> str:
    """The command line this process was started with, as the store and the logs keep it."""
    return " ".join([Path(sys.argv[0]).name] + sys.argv[1:])


def session_meta(name: str, registry_dirs=()) -> dict:
    """What the store keeps about the run besides the tournament and the play settings: name,
    command line, versions, platform, the bot folders (absolute; --resume reuses them)."""
    return dict(name=name, command=command_line(), kdtourney=__version__,
                python=platform.python_version(), numba=numba.__version__,
                numpy=numpy.__version__, platform=platform.platform(),
                bots_dirs=[str(Path(d).resolve()) for d in registry_dirs], created=store.now())


def asked_folder(out=None, name=None) -> Path | None:
    """The folder a run was given: `out`, else reports/<name>, else None (then `new_folder` once
    the tournament is known). ArenaError for a name that is a path (--out takes those)."""
    if out:
        return Path(out)
    if name:
        if name in (".", "..") or "/" in name or os.sep in name:
            raise ArenaError(f"--name {name!r} names a folder of {REPORTS}/, not a path: give a "
                             "name without '/' (or --out DIR)")
        return REPORTS / name
    return None


def new_folder(tournament: Tournament, prefix: str = "", stamp: str | None = None) -> Path:
    """A folder not yet taken, reports/<prefix><bots>-<stamp> (`default_name`; stamp: now, to the
    second), with -2, -3, ... appended if needed (two runs in one second get two folders)."""
    if stamp is None:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = base = REPORTS / f"{prefix}{default_name(tournament, stamp)}"
    for i in range(2, 1000):
        if not folder.exists():
            break
        folder = base.with_name(f"{base.name}-{i}")
    return folder


def stored_seed(folder) -> int | None:
    """The seed of the tournament stored in `folder`, None if it holds none (or is None): the
    same command without --seed on the same folder plays the same games."""
    if folder is not None and store.exists(folder):
        return store.load_config(folder)["tournament"]["seed"]
    return None


def resume_command(folder) -> str:
    """The command that continues what `folder` holds: kdtourney run, sprt, tune or ladder
    --resume FOLDER."""
    try:
        config = store.load_config(folder)
    except store.StoreError:
        config = {}
    kind = next((k for k in ("sprt", "tune", "ladder") if k in config), "run")
    return f"kdtourney {kind} --resume {folder}"


def stored_bots_dirs(meta: dict) -> list[str]:
    """The bot folders of a stored run (`session_meta`) that still exist: a resumed run given no
    bot folders uses them."""
    return [d for d in meta.get("bots_dirs", []) if Path(d).is_dir()]


def check_entrants(registry, tournament: Tournament, what: str = "tournament") -> None:
    """Every entrant of a stored tournament (or test: `what`) resolves in `registry`, bot and
    parameters; ArenaError for the first one that does not."""
    for spec in tournament.specs:
        try:
            registry.resolve(spec)
        except EntrantError as exc:
            raise ArenaError(f"{exc} (needed by the stored {what}; --bots-dir?)") from None


def record_play(st: store.Store, play: PlaySettings, folder) -> None:
    """Check `play` against the play settings `st` records (ArenaError naming the first that
    differs, `kdtourney.match.settings.settle`) and record them (a store older than the record gets
    it now)."""
    settle(stored_settings(st.config(), played=st.count_games() > 0), play.to_dict(), folder)
    st.set_config(PLAY_KEY, play.to_dict())


def check_code(st: store.Store, identities: dict, folder) -> list[str]:
    """Check that every entrant's code is the code its stored games were played with: ArenaError
    (one line naming the entrant and what changed) if not, so old and new games never mix. A store
    made before identities were recorded gets them now; returns a note saying so."""
    stored = st.entrants()
    if stored is None:
        done = st.count_games()
        st.record_entrants(identities)
        st.update_meta(entrants_recorded_after=done)
        return [f"{folder} is older than kdtourney's record of what code plays: the code of its "
                f"{done} stored games is unknown; the entrants' code is recorded from now on"]
    for entrant, now in identities.items():
        before = stored.get(entrant)
        if before is not None and before.get("digest") != now["digest"]:
            changed = [k for k in sorted(set(before) | set(now))
                       if k not in ("digest", "origin") and before.get(k) != now.get(k)]
            what = "; ".join(f"{k} {short(before.get(k))} (stored) vs {short(now.get(k))} (now)"
                             for k in changed)
            raise ArenaError(f"{entrant} ({now.get('origin', now['kind'])}): its code changed "
                             f"since the games stored in {folder} ({what}); play the new code "
                             "under a new --out, or restore the code that played")
    return []


def create_store(folder: Path, table: Tournament, meta: dict, identities: dict | None,
                 play: PlaySettings | None, configs: dict | None = None, then=None) -> None:
    """Make `folder`'s store: the table, `meta` (its first session), the entrants' `identities`,
    the command's own `configs` ({key: value}), `then(st)` if given, and the `play` settings.
    ArenaError if it cannot."""
    try:
        st = store.Store.create(folder, table.to_dict(), dict(meta, sessions=1), identities)
    except store.StoreError as exc:
        raise ArenaError(str(exc)) from None
    with st:
        for key, value in (configs or {}).items():
            st.set_config(key, value)
        if then is not None:
            then(st)
        record_play(st, play or PlaySettings(), folder)


def read_config(folder) -> dict:
    """The config stored in `folder`; ArenaError if it holds no valid store."""
    try:
        return store.load_config(folder)
    except store.StoreError as exc:
        raise ArenaError(str(exc)) from None


def check_existing(st: store.Store, folder: Path, what: str, diff: list[str], then: str,
                   identities: dict | None, play: PlaySettings | None) -> list[str]:
    """Check that the command may go on with the open store `st` of `folder`: it holds this `what`
    (`refuse_another`), played by this code (`check_code`, unless `identities` is None) under
    these `play` settings (`record_play`). Returns notes for the user."""
    refuse_another(folder, what, diff, then)
    notes = check_code(st, identities, folder) if identities is not None else []
    record_play(st, play or PlaySettings(), folder)
    return notes


def open_existing(folder: Path) -> store.Store:
    """The store of `folder`, open; ArenaError if it is not a valid one."""
    try:
        return store.open_store(folder)
    except store.StoreError as exc:
        raise ArenaError(str(exc)) from None


def refuse_another(folder: Path, what: str, diff: list[str], then: str) -> None:
    """ArenaError if `diff` (the differences with what the folder holds) is not empty: the folder
    holds another `what`; `then`: what the user may do instead."""
    if diff:
        more = f" (and {len(diff) - 1} more)" if len(diff) > 1 else ""
        raise ArenaError(f"{folder} holds another {what}: {diff[0]}{more}; {then}")


def short(value) -> str:
    """A hash cut to 12 characters; anything else as it is."""
    text = str(value)
    return text[:12] if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else text


def record_harness_error(folder, exc: BaseException) -> Path:
    """Append the full trace of `exc`, an error of kdtourney's own while it played into `folder`
    (a HarnessError: the worker's trace first), to FOLDER/logs/harness.log with the time and the
    command line; returns the log's path."""
    path = Path(folder) / LOGS / HARNESS_LOG
    path.parent.mkdir(parents=True, exist_ok=True)
    worker = getattr(exc, "trace", "")
    with open(path, "a", encoding="utf-8") as log:
        log.write(f"==== {store.now()} kdtourney {__version__}: {command_line()}\n")
        if worker:
            log.write(f"in the worker:\n{worker.rstrip()}\nin the command's process:\n")
        log.write("".join(traceback.format_exception(exc)))
    return path


__all__ = ["REPORTS", "LOGS", "HARNESS_LOG", "session_meta", "asked_folder", "new_folder",
           "stored_seed", "resume_command", "stored_bots_dirs", "check_entrants", "record_play",
           "check_code", "read_config", "check_existing", "record_harness_error",
           "command_line"]
