"""The options and parameter types several commands share.

    Number, Real, AllowedFolder      parameter types whose bad value is a one-line error
    duration(text)                   --until's 90s, 10m, 2h as seconds
    options(*decorators)             several options as one decorator
    bots_dir_option, sandbox_allow_option, scheduler_option, rule_options, session_options
    RULE_PARAMS, STORED_PARAMS       the options that define what a folder plays
    given(ctx, name)                 whether an option was given on the command line
"""

import os

import click

from kdtourney.cli.group import OneLineError
from kdtourney.errors import UserError

MAX_GAMES = 10_000_000  # games (or SPSA iterations) one command may ask for: the plan is in memory

# the options that define what is played: --resume DIR plays what DIR stores and refuses them
# (RULE_PARAMS: tournament.RULE_OPTIONS and dynasty, named here so that the CLI starts without
# the engine)
RULE_PARAMS = ("dynasty", "variant", "three_player", "harmony", "middle_kingdom", "tiebreak",
               "first_picks")
STORED_PARAMS = ("seed", "move_time_limit", "time_control", "first_move_time", "out", "name")


def options(*decorators):
    """One decorator applying click options in the order listed (the order --help shows)."""
    def apply(command):
        for decorator in reversed(decorators):
            command = decorator(command)
        return command
    return apply


def given(ctx, name) -> bool:
    """Whether option `name` was given on the command line (not a default)."""
    return ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE


class Number(click.ParamType):
    """An int or float option whose bad value is a one-line error (exit 2), like other bad input:
    not a number, not finite, not positive (`positive`), or above `maximum`. (A parameter type
    raises click's kind of error: click parses outside the group too, as the docs' test does.)"""

    def __init__(self, kind=int, positive=True, maximum=10**9):
        self.kind, self.positive, self.maximum = kind, positive, maximum
        self.name = "integer" if kind is int else "number"

    def convert(self, value, param, ctx):
        if isinstance(value, self.kind) and not isinstance(value, bool):
            number = value
        else:
            try:
                number = self.kind(str(value))
            except ValueError:
                raise OneLineError(f"{param.opts[0]} expects {'an' if self.kind is int else 'a'} "
                                  f"{self.name}, not {value!r}") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise OneLineError(f"{param.opts[0]} must be a finite number, not {value}")
        if self.positive and not number > 0:
            raise OneLineError(f"{param.opts[0]} must be positive, not {value}")
        if not self.positive and number < 0:
            raise OneLineError(f"{param.opts[0]} must not be negative, not {value}")
        if number > self.maximum:
            raise OneLineError(f"{param.opts[0]} must be at most {self.maximum:,}, not {value}")
        return number


class Real(click.ParamType):
    """A finite float of any sign; a bad value is a one-line error (exit 2)."""

    name = "number"

    def convert(self, value, param, ctx):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise OneLineError(f"{param.opts[0]} expects a number, not {value!r}") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise OneLineError(f"{param.opts[0]} must be a finite number, not {value}")
        return number


class AllowedFolder(click.Path):
    """A folder every sandbox shows (--sandbox-allow): it must exist; resolved. Neither / nor a
    folder holding the user's home (it would show every file of the machine, or of the user)."""

    def __init__(self):
        super().__init__(exists=True, file_okay=False, resolve_path=True)

    def convert(self, value, param, ctx):
        path = super().convert(value, param, ctx)
        home = os.path.realpath(os.path.expanduser("~"))
        if home == path or home.startswith(path.rstrip(os.sep) + os.sep):
            self.fail(f"{value} holds your home ({home}): allow the folders the bots need, "
                      "such as /opt/jdk", param, ctx)
        return os.path.realpath(path)


def duration(text):
    """'90', '90s', '10m', '2h' -> seconds; a bad value is a one-line error."""
    if text is None:
        return None
    units = {"s": 1, "m": 60, "h": 3600}
    number, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "s")
    try:
        seconds = float(number) * units[unit]
    except ValueError:
        raise UserError(f"--until expects a duration such as 90s, 10m or 2h, not {text!r}") \
            from None
    if not seconds > 0:
        raise UserError(f"--until must be positive, not {text}")
    return seconds


bots_dir_option = click.option(
    "--bots-dir", "bots_dirs", multiple=True, type=click.Path(file_okay=False), metavar="DIR",
    help="A folder of bots, Python modules and TOML files (repeatable); searched before "
    "KDTOURNEY_BOTS_DIR and ./bots/.")

sandbox_allow_option = click.option(
    "--sandbox-allow", "sandbox_allow", multiple=True, type=AllowedFolder(), metavar="DIR",
    help="With --sandbox: a folder every bot may read besides the system and its own folder, "
    "e.g. a JDK in /opt or shared models (repeatable). Stored: a resume keeps it.")

scheduler_option = click.option(
    "--scheduler", metavar="ADDRESS", help="Play on a Dask cluster instead: tcp://HOST:PORT of a "
    "running scheduler (or its scheduler file), or local:N for a local cluster of N worker "
    "processes. Needs the dask extra.")

rule_options = options(
    click.option("--dynasty", is_flag=True, default=False, help="Each table plays three deals in a "
                 "row; the totals decide."),
    click.option("--variant", metavar="standard|duel", help="duel: Mighty Duel (2 players, 7x7)."),
    click.option("--three-player", metavar="official|bga", help="3-player setup."),
    click.option("--harmony", is_flag=True, default=None, help="+5 with nothing discarded."),
    click.option("--middle-kingdom", is_flag=True, default=None,
                 help="+10 with the castle central."),
    click.option("--tiebreak", metavar="crowns|territory"),
    click.option("--first-picks", metavar="random|abba"),
)


def session_options(what, *, seed, name_default, resume, last_line):
    """The options of a command that plays and stores games (run, sprt, tune, ladder): seed,
    workers, scheduler, folder, bots, time limits, resume and output. `what` names the thing
    stored ('Tournament', 'Test'); the other arguments are the command's own help texts."""
    return options(
        click.option("--seed", type=Number(int, positive=False), help=f"{seed} (default: fresh, "
                     "printed and stored; on an existing --out, the stored one)."),
        click.option("--workers", type=Number(int), help="Worker processes (default: all cores)."),
        scheduler_option,
        click.option("--out", metavar="DIR", help=f"{what} folder (default reports/<name>)."),
        click.option("--name", help=f"{what} name (default: {name_default} and a time stamp)."),
        click.option("--bots-dir", "bots_dirs", multiple=True, metavar="DIR",
                     help="A folder of bots, Python modules and TOML files (repeatable)."),
        click.option("--move-time-limit", type=Number(float), metavar="SECONDS",
                     help="A decision taking longer forfeits the game."),
        click.option("--time-control", metavar="BANK+INC", help="A clock per bot and game: BANK "
                     "seconds, INC seconds added after each decision, e.g. 10+0.1; a bot over "
                     "its bank forfeits (fault time). Combines with --move-time-limit."),
        click.option("--first-move-time", type=Number(float), metavar="SECONDS",
                     help="The limit of a bot's first decision of each game instead of the move "
                     "limit and the bank (which it does not draw on), e.g. 1.0; needs "
                     "--move-time-limit or --time-control."),
        click.option("--move-time-margin", type=Number(float, positive=False), metavar="SECONDS",
                     help="Every seat's margin per game: what its decisions may take beyond "
                     "what their clock allows (pipes, scheduler), lent and paid back by its bank, "
                     "before it forfeits (default 0.2). Stored: a resume keeps it."),
        click.option("--isolate", is_flag=True, help="Play every Python entrant in its own "
                     "process (kdtourney serve): a crash or a hang costs the bot its game, not the "
                     "worker, and the clock cuts as for external bots (against cheating: "
                     "--sandbox). Stored: a resume keeps it."),
        click.option("--sandbox", is_flag=True, help="Play every entrant in its own process inside "
                     "a bubblewrap sandbox (bwrap): no network, no other process, no file but its "
                     "own folder and its runtime; limits on memory, processes and output. Stored: "
                     "a resume keeps it."),
        click.option("--bot-memory", type=Number(int), metavar="MIB", help="With --sandbox: the "
                     "memory of a bot process and its children; past it the bot forfeits (fault "
                     "memory; default 1024)."),
        sandbox_allow_option,
        click.option("--bot-cpus", type=Number(float, maximum=1024), metavar="N", help="With "
                     "--sandbox: the CPU quota of a bot process and its children while it decides, "
                     "in cores (default 1; between its decisions it is frozen). Stored: a resume "
                     "keeps it."),
        click.option("--require-limits", is_flag=True, help="With --sandbox: stop with an error "
                     "where a machine cannot enforce every limit (memory, processes, CPU quota, "
                     "freezing), instead of a note."),
        click.option("--startup-timeout", type=Number(float), metavar="SECONDS",
                     help="Bots in their own process: seconds to start and answer hello (default "
                     "20)."),
        click.option("--hang-timeout", type=Number(float), metavar="SECONDS", help="A worker "
                     "making no progress this long is replaced (default 600; with "
                     "--move-time-limit, 10x it, at least 30; at least --startup-timeout + 10); "
                     "in a decision of an in-process bot under a clock, sooner: after what the "
                     "clock allows it plus its margin and 2 s."),
        click.option("--resume", metavar="DIR", help=resume),
        click.option("--quiet", "-q", is_flag=True, help=f"Print only errors and the {last_line}."),
        click.option("--no-report", is_flag=True, help="Do not write DIR/index.html at the end."),
    )


__all__ = ["MAX_GAMES", "RULE_PARAMS", "STORED_PARAMS", "options", "given", "Number", "Real",
           "AllowedFolder", "duration", "bots_dir_option", "sandbox_allow_option",
           "scheduler_option", "rule_options", "session_options"]
