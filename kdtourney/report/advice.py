"""The commands a report advises, built from what the store recorded, so that each runs as printed.

    resume_advice(folder, config)   the command that finishes what `folder` holds: `kdtourney
                                    run|sprt|tune|ladder --resume DIR`, or a play's command on DIR
    reproduce_command(config)       the first command with its seed, without its folder: the same
                                    games into a new folder (None: not recorded, or keyed seeds)
"""

from __future__ import annotations

import shlex

PROGRAMS = ("kdtourney", "__main__.py")      # argv[0] of `kdtourney ...` and `python -m kdtourney`
FOLDER_OPTIONS = ("--out", "--name", "--seed", "--resume")  # each takes a value


def command_kind(config: dict) -> str:
    """The command that made the folder: sprt, tune, ladder, play or run."""
    kind = next((k for k in ("sprt", "tune", "ladder") if k in config), None)
    words = command_words(config.get("meta") or {})
    if kind is None and words and words[1] == "play":
        kind = "play"
    return kind or "run"


def command_words(meta: dict) -> list[str] | None:
    """The recorded command line, split into words (`kdtourney` first), or None if the store
    recorded none, or one that is not kdtourney's (a folder made from Python)."""
    try:
        words = shlex.split(str(meta.get("command") or ""))
    except ValueError:
        return None
    if len(words) < 2 or words[0] not in PROGRAMS:
        return None
    return ["kdtourney", *words[1:]]


def without(words: list[str], options=FOLDER_OPTIONS) -> list[str]:
    """`words` without the `options` and their values (`--out DIR` and `--out=DIR` alike)."""
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in options:
            skip = True
        elif word.split("=", 1)[0] not in options:
            kept.append(word)
    return kept


def resume_advice(folder, config: dict) -> str:
    """The command that plays what `folder` still lacks, as a user types it."""
    kind = command_kind(config)
    words = command_words(config.get("meta") or {})
    if kind == "play" and words:  # play has no --resume: its command on the same --out goes on
        return shlex.join([*without(words), "--out", str(folder)])
    return shlex.join(["kdtourney", kind, "--resume", str(folder)])


def reproduce_command(config: dict) -> str | None:
    """The folder's first command with its seed and without its folder: the same games, into a
    new folder under reports/. None when the store keeps no command line, or the deals are keyed
    with the store's secret (--sandbox: only a resume deals the same games)."""
    words = command_words(config.get("meta") or {})
    seed = (config.get("tournament") or {}).get("seed")
    if words is None or seed is None or config.get("seed_secret") or "--resume" in words:
        return None
    return shlex.join([*without(words), "--seed", str(seed)])


__all__ = ["command_kind", "command_words", "without", "resume_advice", "reproduce_command"]
