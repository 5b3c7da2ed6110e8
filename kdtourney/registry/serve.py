"""The bot side of KDTP/1: any bot the registry knows, as a program on stdin/stdout
(`kdtourney serve BOT[:key=value...]`); and the module side of the harness's listing step
(`list_bots`, `kdtourney list-bots`: kdtourney.external.listing).

The bot plays exactly as in-process: before each game a new instance is made (the entrant's
parameters, then the `game` message's options over them) and set up with the game's seat, rules
and seed; each `act` is rebuilt into the GameView an in-process bot gets (`kdtp.view_of`) and the
bot's answer is sent back; `result` reaches `Bot.finish`. The engine's kernels and the reading of
an `act` are loaded before the answer to `hello` (the harness waits for it with the start-up
timeout): the first decision is the bot's own time, as in-process. A bot that raises ends the
program with status 1 (the traceback on stderr, for the harness's fault); a message kdtourney
cannot read ends it with status 2.
"""

from __future__ import annotations

import math
import os
import sys
import traceback

from kdtourney import __version__
from kdtourney.engine import Game, Rules
from kdtourney.engine import warm_up as warm_up_engine
from kdtourney.external import kdtp
from kdtourney.external.listing import LISTING
from kdtourney.registry import BotRegistry, DuplicateBotError, Entrant, EntrantError


class _Stop(Exception):
    """End the program with `code`."""

    def __init__(self, code: int, message: str = ""):
        super().__init__(message)
        self.code = code


def reserve_stdout():
    """Keep the standard output for KDTP: returns a private binary stream on it, and sends what
    anything else writes there (a bot's `print`, a C library's output) to stderr, where the
    harness logs it instead of reading it as a broken answer."""
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


def serve(registry: BotRegistry, spec, stdin=None, stdout=None, stderr=None) -> int:
    """Play `spec` over KDTP on the binary streams stdin/stdout until `quit` or the end of
    stdin; returns the exit status. EntrantError (before anything is read) for a bad spec."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    stderr = stderr or sys.stderr
    entrant = registry.resolve(spec)
    bot = rules = None

    def send(message):
        stdout.write(kdtp.encode(message))
        stdout.flush()

    try:
        for line in stdin:
            try:
                message = kdtp.decode(line)
            except kdtp.ProtocolError as exc:
                raise _Stop(2, f"Error: the harness sent {exc}") from None
            kind = message["type"]
            if kind == "hello":
                if (message.get("protocol"), message.get("version")) != (kdtp.PROTOCOL,
                                                                          kdtp.VERSION):
                    raise _Stop(2, f"Error: this bot speaks {kdtp.PROTOCOL}/{kdtp.VERSION}, the "
                                   f"harness {message.get('protocol')}/{message.get('version')}")
                warm_up()
                send({"type": "hello", "name": entrant.spec, "version": __version__,
                      "author": "kdtourney serve"})
            elif kind == "game":
                if bot is not None:
                    _call(bot.close)
                rules = _read(kdtp.rules_of, message)
                bot = _call(registry.create, _with_options(registry, entrant, message))
                _call(bot.setup, message["seat"], rules, message["seed"])
            elif kind == "act":
                if bot is None:
                    raise _Stop(2, "Error: the harness sent act before game")
                view = _read(kdtp.view_of, message, rules)
                _check_legal(view, message)
                action = _call(bot.act, view)
                note = getattr(bot, "decision_note", None)  # its note on the decision, if any
                if note is not None:
                    bot.decision_note = None
                send(kdtp.action_message(action, note if isinstance(note, str) else None))
            elif kind == "result":
                if bot is not None:
                    _call(bot.finish, message.get("scores"), message.get("ranks"))
            elif kind == "quit":
                break
            # other types: a later protocol's, ignored
    except _Stop as stop:
        if str(stop):
            print(str(stop), file=stderr, flush=True)
        return stop.code
    finally:
        if bot is not None:
            try:
                bot.close()
            except Exception:  # noqa: BLE001 - exiting anyway
                pass
    return 0


def list_bots(files: dict, specs=()) -> dict:
    """What the bot modules of `files` (as `BotRegistry.source_files()` gives them) define, found
    by running them as the harness would in its own process: the listing message, `{"type":
    "listing", "bots": [{"name", "origin", "description", "parameters"}], "broken": [{"origin",
    "error"}], "refused": {spec: the one-line error of a value its bot refuses}}` over every bot
    with its defaults and every entrant of `specs`; or `{"type": "listing", "duplicate": the
    error}` for two bots with one name. Texts that are not Unicode, and values JSON has not, are
    sent as their escaped text (repr)."""
    try:
        registry = BotRegistry.from_sources(files, builtins=False, entry_points=False)
    except DuplicateBotError as exc:
        return _plain({"type": LISTING, "duplicate": str(exc)})
    bots = [{"name": info.name, "origin": info.origin, "description": info.description,
             "parameters": info.parameters} for info in registry.bots.values()]
    refused = {}
    for spec in [*registry.bots, *specs]:
        try:
            registry.resolve(spec)
        except EntrantError as exc:
            refused[spec] = str(exc)
    return _plain({"type": LISTING, "bots": bots, "refused": refused,
                   "broken": [{"origin": b.origin, "error": b.error} for b in registry.broken]})


def _plain(value):
    """`value` as KDTP can carry it: objects, lists, finite numbers, booleans, null and Unicode
    text; anything else as its repr."""
    if isinstance(value, dict):
        return {_plain(str(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int)) \
            or (isinstance(value, float) and math.isfinite(value)):
        return value
    text = value if isinstance(value, str) else repr(value)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def warm_up() -> None:
    """Load the engine's kernels and read one `act` now, not in the bot's first decision (the
    arena's workers run it too, so that on a fresh install the kernels are compiled before a
    sandboxed bot copies the cache)."""
    warm_up_engine()
    game = Game(Rules(2), 0)
    for _ in range(8):  # a few turns in, so that the kingdoms in the act have squares
        actions = game.legal_actions()
        game.apply(actions[len(actions) // 2])
    player = game.current_player
    assert player is not None  # a few turns in: the game goes on
    view = game.view(player)
    kdtp.view_of(kdtp.decode(kdtp.act_line(view, view.legal_actions(), None)), view.rules)


def _with_options(registry, entrant: Entrant, game: dict) -> Entrant:
    """The entrant with the game's options over its own parameters, checked like a spec."""
    options = game.get("options") or {}
    if not isinstance(options, dict):
        raise _Stop(2, f"Error: the game's options are {options!r}, not an object")
    params = dict(entrant.params, **options)
    try:
        return registry.resolve(Entrant(entrant.name, params))
    except EntrantError as exc:
        raise _Stop(2, f"Error: the game's options: {exc}") from None


def _read(decoder, *args):
    try:
        return decoder(*args)
    except kdtp.ProtocolError as exc:
        raise _Stop(2, f"Error: {exc}") from None


def _call(fn, *args):
    """Call into the bot; an exception ends the program (status 1) with its traceback."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - the bot's failure, reported on stderr
        tb = "".join(traceback.format_exception(exc)).rstrip()
        raise _Stop(1, tb) from None


def _check_legal(view, act):
    """The harness's legal actions must be as many as the rebuilt view's: anything else means the
    two sides do not play the same game, and the bot must not play on a wrong view."""
    ours, theirs = len(view.legal_actions()), len(act.get("legal", ()))
    if ours != theirs:
        raise _Stop(2, f"Error: the act lists {theirs} legal actions, its state has {ours}: the "
                       "harness and kdtourney do not play the same game")


__all__ = ["serve", "list_bots", "warm_up"]
