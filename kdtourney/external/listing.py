"""Asking bot modules what they define, each inside a sandbox (`list_modules`): how the harness
learns a folder module's bots, their names, descriptions and parameters, and the parameter values
they refuse, under `--sandbox`, where a bot's code runs nowhere but in its sandbox.

Each module gets a process of its own, `kdtourney list-bots --sources FILE [SPEC...]`
(kdtourney.registry.serve.list_bots), given only that module's own files, as a sandboxed served bot
gets them, and sandboxed as one; all are started at once. Each answers one line, a JSON object
`{"type": "listing", ...}`, within the start-up timeout, and exits. What a module does at import
(read its standard input, hang, exit, print) cannot hold the harness: its input is closed, what it
prints goes to its stderr, and one that does not answer in time, or answers something else, is
reported with what went wrong and its last stderr lines.
"""

from __future__ import annotations

import os
import sys

from kdtourney.external.declaration import SERVED, Program
from kdtourney.external.pool import ProcessPool
from kdtourney.external.process import BotFailure, BotProcess, BotTimeout, ProcessSettings

LISTING = "listing"  # the message a module's listing answers with, and what it is asked for


def listing_program(sources_file: str, specs=()) -> Program:
    """`kdtourney list-bots` for the bot files of `sources_file` (registry.encode_sources),
    checking the entrants `specs` too; sandboxed as a served bot is."""
    command = (sys.executable, "-m", "kdtourney", "list-bots", "--sources", sources_file, *specs)
    return Program(name=LISTING, command=command, cwd=os.getcwd(), origin=SERVED,
                   reads=(sources_file,))


def list_modules(requests: dict, settings: ProcessSettings) -> dict:
    """Ask every module of `requests` ({key: (its files as registry.encode_sources text, the
    specs to check)}), each in a process of its own in `settings.sandbox`, all at once, within
    `settings.startup_timeout` seconds: {key: its listing message, or {"error": one line}}."""
    pool = ProcessPool(settings)  # for its temporary folder, where the files are given
    answers, processes = {}, {}
    try:
        for n, (key, (text, specs)) in enumerate(requests.items()):
            process = BotProcess(listing_program(pool.file(f"listing-{n}.json", text), specs),
                                 settings)
            try:
                process.spawn()
                process.proc.stdin.close()  # a module reading its input at import gets nothing
                processes[key] = process
            except BotFailure as exc:
                answers[key] = {"error": _failed(exc)}
        for key, process in processes.items():
            process.allowed = settings.startup_timeout
            try:
                answer = process.receive(process.started_at + settings.startup_timeout, LISTING)
            except BotTimeout as exc:
                exc.args = (f"did not list its bots within the start-up timeout of "
                            f"{settings.startup_timeout:g} s",)
                answers[key] = {"error": _failed(exc)}
                continue
            except BotFailure as exc:
                answers[key] = {"error": _failed(exc)}
                continue
            answers[key] = answer if answer["type"] == LISTING else {
                "error": f"listing its bots in a sandbox: it answered {answer['type']!r}, not "
                         "the listing"}
    finally:
        for process in processes.values():
            process.stop(grace=1.0)
        pool.close()
    return answers


def _failed(exc: BotFailure) -> str:
    stderr = exc.stderr.splitlines()[-3:] if exc.stderr else []
    return f"listing its bots in a sandbox: it {exc}" + (
        f" (stderr: {' | '.join(stderr)})" if stderr else "")


__all__ = ["list_modules", "listing_program", "LISTING"]
