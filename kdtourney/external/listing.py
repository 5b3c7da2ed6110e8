"""Asking bot modules what they define, each inside a sandbox (`list_modules`): how the harness
learns a folder module's bots, their names, descriptions and parameters, and the parameter values
they refuse, under `--sandbox`, where a bot's code runs nowhere but in its sandbox.

Each module gets a process of its own, `kdtourney list-bots --sources FILE [SPEC...]`
(kdtourney.registry.serve.list_bots), given only that module's own files, as a sandboxed served bot
gets them, and sandboxed as one; a few at once (`at_once`: by cores and memory). Each answers one
line, a JSON object `{"type": "listing", ...}`, within the start-up timeout of its own start, and
exits; one late is asked once more, alone. What a module does at import (read its standard input,
hang, exit, print) cannot hold the harness: its input is closed, what it prints goes to its
stderr, and one that does not answer in time, or answers something else, is reported with what
went wrong and its last stderr lines.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from kdtourney.external.declaration import SERVED, Program
from kdtourney.external.pool import ProcessPool
from kdtourney.external.process import BotFailure, BotProcess, BotTimeout, ProcessSettings

LISTING = "listing"  # the message a module's listing answers with, and what it is asked for
LISTING_MIB = 256    # memory a listing may take (a Python importing kdtourney holds ~70 MiB)


def listing_program(sources_file: str, specs=()) -> Program:
    """`kdtourney list-bots` for the bot files of `sources_file` (registry.encode_sources),
    checking the entrants `specs` too; sandboxed as a served bot is."""
    command = (sys.executable, "-m", "kdtourney", "list-bots", "--sources", sources_file, *specs)
    return Program(name=LISTING, command=command, cwd=os.getcwd(), origin=SERVED,
                   reads=(sources_file,))


def at_once() -> int:
    """How many listings run at once: one per core, as many as the memory available holds at
    LISTING_MIB each, at least one."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            available = next(int(line.split()[1]) >> 10 for line in f
                             if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError, IndexError):
        available = LISTING_MIB
    return max(1, min(os.cpu_count() or 1, available // LISTING_MIB))


def list_modules(requests: dict, settings: ProcessSettings, parallel: int | None = None) -> dict:
    """Ask every module of `requests` ({key: (its files as registry.encode_sources text, the
    specs to check)}), each in a process of its own in `settings.sandbox`, `parallel` at a time
    (`at_once`), each within `settings.startup_timeout` seconds of its own start: {key: its
    listing message, or {"error": one line}}. One that did not answer in time is asked once
    more, alone (a machine under load, not the module, may have held it)."""
    pool = ProcessPool(settings)  # for its temporary folder, where the files are given
    files = {key: (pool.file(f"listing-{n}.json", text), specs)
             for n, (key, (text, specs)) in enumerate(requests.items())}
    try:
        answers = _window(files, settings, parallel or at_once())
        late = [key for key, answer in answers.items() if answer.get("late")]
        answers.update(_window({key: files[key] for key in late}, settings, 1))
    finally:
        pool.close()
    return {key: {k: v for k, v in answers[key].items() if k != "late"} for key in requests}


def _window(files: dict, settings: ProcessSettings, parallel: int) -> dict:
    """The answers of `list_modules` for `files` ({key: (sources file, specs)}), at most
    `parallel` processes alive at a time, each answered (or stopped) in the order started."""
    answers: dict = {}
    running: dict[Any, BotProcess] = {}
    todo = list(files)
    try:
        while todo or running:
            while todo and len(running) < parallel:
                key = todo.pop(0)
                process = BotProcess(listing_program(*files[key]), settings)
                try:
                    process.spawn()
                    proc = process.proc
                    assert proc is not None and proc.stdin is not None  # spawn piped it
                    proc.stdin.close()  # a module reading its input at import: nothing
                    running[key] = process
                except BotFailure as exc:
                    answers[key] = {"error": _failed(exc)}
            if running:
                key = next(iter(running))
                answers[key] = _answer(running[key], settings.startup_timeout)
                running.pop(key).stop(grace=1.0)
    finally:
        for process in running.values():
            process.stop(grace=1.0)
    return answers


def _answer(process: BotProcess, timeout: float) -> dict:
    process.allowed = timeout
    try:
        answer = process.receive(process.started_at + timeout, LISTING)
    except BotTimeout as exc:
        exc.args = (f"did not list its bots within the start-up timeout of {timeout:g} s",)
        return {"error": _failed(exc), "late": True}
    except BotFailure as exc:
        return {"error": _failed(exc)}
    return answer if answer["type"] == LISTING else {
        "error": f"listing its bots in a sandbox: it answered {answer['type']!r}, not the "
                 "listing"}


def _failed(exc: BotFailure) -> str:
    stderr = exc.stderr.splitlines()[-3:] if exc.stderr else []
    return f"listing its bots in a sandbox: it {exc}" + (
        f" (stderr: {' | '.join(stderr)})" if stderr else "")


__all__ = ["list_modules", "listing_program", "at_once", "LISTING", "LISTING_MIB"]
