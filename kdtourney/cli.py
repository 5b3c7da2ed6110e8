"""The `kdtourney` command line: parses, calls the library, prints."""

import atexit
import contextlib
import gc
import os
import sys

import click

from kdtourney import __version__, interrupts
from kdtourney.service import fork_server
from kdtourney.text import shown


class _CommandError(click.ClickException):
    """A one-line `Error: ...` and exit status 2 (bad input), no traceback; what a bot wrote in
    it (an error of its module, its stderr) with its control characters escaped."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(shown(message))


@contextlib.contextmanager
def _usage_in_one_line():
    """click's usage errors (an unknown option, a missing argument) as one `Error:` line: click
    would add the usage and a hint. A bare command still shows its help."""
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:
        raise
    except click.UsageError as exc:
        raise _CommandError(exc.format_message()) from None


class _Commands(click.Group):
    def make_context(self, *args, **kwargs):
        with _usage_in_one_line():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        try:
            with _usage_in_one_line(), interrupts.caught():
                return super().invoke(ctx)
        except KeyboardInterrupt:  # one the command did not handle (it was not playing): 130
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except ImportError as exc:  # an untested Numba, refused as the engine is imported
            check = sys.modules.get("kdtourney.engine.numba_version")
            if not isinstance(exc, getattr(check, "NumbaVersionError", ())):
                raise
            raise _CommandError(str(exc)) from None


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kdtourney")
def main():
    """Tournaments and bot evaluation for Kingdomino."""


def script(prog_name: str | None = None):
    """The `kdtourney` command and `python -m kdtourney` (a served bot's process): `main`, with
    the garbage collector's passes at the interpreter's exit left out (everything is frozen at
    exit): over the objects of Numba, pandas and matplotlib they took 0.3 to 0.5 s of every exit.
    Finalizers and exit handlers run as before."""
    atexit.register(gc.freeze)
    main(prog_name=prog_name)


@contextlib.contextmanager
def _one_line(*errors):
    """Library errors of these types (one-line messages meant for the user) as a _CommandError."""
    try:
        yield
    except errors as exc:
        raise _CommandError(str(exc)) from None


class _HarnessFailure(click.ClickException):
    """A bug of kdtourney's while it played: one `Error:` line naming the log of its trace, exit
    status 70 (EX_SOFTWARE), not 2 (bad input)."""

    exit_code = os.EX_SOFTWARE


@contextlib.contextmanager
def _harness_errors(folder, *expected):
    """Around a command's play into `folder`: an exception other than the `expected` (one-line
    errors meant for the user) and click's is a bug of kdtourney's (in a worker: HarnessError):
    its full trace goes to FOLDER/logs/harness.log and the user gets one line naming it, exit
    status 70. The games stored before it stay stored (each is committed as it ends)."""
    from kdtourney.commands.run import record_harness_error
    from kdtourney.tournament.definition import HarnessError

    try:
        yield
    except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort, *expected):
        raise
    except Exception as exc:
        log = record_harness_error(folder, exc)
        text = str(exc).strip()
        what = text if isinstance(exc, HarnessError) else \
            f"kdtourney failed: {type(exc).__name__}" + (f": {text.splitlines()[-1]}" if text else "")
        raise _HarnessFailure(f"{what} (full trace in {log})") from None


def _options(*decorators):
    """One decorator applying click options in the order listed (the order --help shows)."""
    def apply(command):
        for decorator in reversed(decorators):
            command = decorator(command)
        return command
    return apply


def _registry(bots_dirs, sandbox=None, startup_timeout=None):
    """The BotRegistry of these bot folders; a bad folder or a duplicate bot is a one-line error.
    sandbox (--sandbox): bot modules run in it only, where they are asked what they define, each
    within `startup_timeout` seconds (default 20)."""
    from kdtourney.external import DEFAULT_STARTUP_TIMEOUT, SandboxError
    from kdtourney.registry import BotRegistry, BotsDirError, DuplicateBotError

    with _one_line(BotsDirError, DuplicateBotError, SandboxError):  # (no bwrap to list modules)
        return BotRegistry(bots_dirs, sandbox=sandbox,
                           startup_timeout=startup_timeout or DEFAULT_STARTUP_TIMEOUT)


_bots_dir_option = click.option(
    "--bots-dir", "bots_dirs", multiple=True, type=click.Path(file_okay=False), metavar="DIR",
    help="A folder of bots, Python modules and TOML files (repeatable); searched before "
    "KDTOURNEY_BOTS_DIR and ./bots/.")


class _AllowedFolder(click.Path):
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


_sandbox_allow_option = click.option(
    "--sandbox-allow", "sandbox_allow", multiple=True, type=_AllowedFolder(), metavar="DIR",
    help="With --sandbox: a folder every bot may read besides the system and its own folder, "
    "e.g. a JDK in /opt or shared models (repeatable). Stored: a resume keeps it.")


@main.command("bots")
@_bots_dir_option
@click.option("--sandbox", is_flag=True, help="List the bots as a --sandbox run finds them: "
              "modules asked in a sandbox what they define, and bots that name files outside "
              "their folder refused.")
@_sandbox_allow_option
def bots_command(bots_dirs, sandbox, sandbox_allow):
    """List the available bots, their parameters (and commands), and the bot files that failed to
    load."""
    from kdtourney.match.settings import PlaySettings
    from kdtourney.registry import listing

    if sandbox_allow and not sandbox:
        raise _CommandError("--sandbox-allow is for sandboxed bots: add --sandbox")
    play = PlaySettings(sandbox=True, sandbox_allow=sandbox_allow) if sandbox else None
    click.echo(listing(_registry(bots_dirs, play.sandbox_for(None) if play else None)))


@main.command("serve")
@click.argument("spec", metavar="BOT[:key=value...]")
@_bots_dir_option
@click.option("--sources", type=click.Path(dir_okay=False), hidden=True,
              help="The bot files as the harness ships them (registry.encode_sources), instead "
              "of the bot folders: how `run --isolate` starts a bot.")
def serve_command(spec, bots_dirs, sources):
    """Play BOT as a KDTP bot on stdin/stdout: the bot side of the protocol kdtourney speaks with
    bots in their own process (docs/protocol.md), for other harnesses and for tests.

    Each game makes a new instance with the parameters of BOT, the game's options over them.
    """
    import sys

    from kdtourney.registry import BotRegistry, EntrantError, decode_sources
    from kdtourney.external.serve import reserve_stdout, serve

    protocol = reserve_stdout()  # before any bot code runs: its prints go to stderr
    if sources:
        with _one_line(OSError, ValueError):
            with open(sources, encoding="utf-8") as f:
                registry = BotRegistry.from_sources(decode_sources(f.read()))
    else:
        registry = _registry(bots_dirs)
    with _one_line(EntrantError):
        registry.resolve(spec)
    sys.exit(serve(registry, spec, stdout=protocol))


@main.command("new-bot")
@click.argument("name")
@click.option("--bots-dir", default="bots", show_default=True, metavar="DIR",
              type=click.Path(file_okay=False), help="The bots folder to write the bot's folder in.")
@click.option("--kdtp", is_flag=True, help="A program in its own process, speaking KDTP/1 on "
              "stdin/stdout (a TOML file and a Python script), instead of a Python class.")
def new_bot_command(name, bots_dir, kdtp):
    """Write a minimal bot NAME into a folder of its own, DIR/NAME, ready to play and to change."""
    from kdtourney.commands.new_bot import NewBotError, write_new_bot
    from kdtourney.registry.registry import BotRegistry

    builtins = BotRegistry((), env=False, cwd=False, entry_points=False).bots
    try:
        written = write_new_bot(bots_dir, name, kdtp=kdtp, taken=builtins)
    except (NewBotError, OSError) as error:
        raise _CommandError(str(error)) from None
    for path in written:
        click.echo(f"wrote {path}")
    click.echo(f"play it:  kdtourney run --bots-dir {bots_dir} --bots {name},greedy,random "
               "--games 60")
    if kdtp:
        click.echo("check it: python -c \"from kdtourney.testing import check_bot; "
                   f"print(check_bot('{name}', bots_dirs=['{bots_dir}']))\"")
    else:
        click.echo(f"check it: python {written[0]}")


@main.command("list-bots", hidden=True)
@click.option("--sources", type=click.Path(dir_okay=False), required=True,
              help="The bot files as the harness ships them (registry.encode_sources).")
@click.argument("specs", nargs=-1, metavar="[BOT[:key=value...]]...")
def list_bots_command(sources, specs):
    """The listing step of --sandbox: run the bot modules of SOURCES and print, as one JSON line,
    the bots they define and the entrants (each bot with its defaults, and SPECS) they refuse
    (kdtourney.external.listing)."""
    from kdtourney.external import kdtp
    from kdtourney.registry import decode_sources
    from kdtourney.external.serve import list_bots, reserve_stdout

    protocol = reserve_stdout()  # before any bot code runs: its prints go to stderr
    with _one_line(OSError, ValueError):
        with open(sources, encoding="utf-8") as f:
            files = decode_sources(f.read())
    protocol.write(kdtp.encode(list_bots(files, specs)))
    protocol.flush()


# --- run, replay, export (the arena) -------------------------------------------------------------

MAX_GAMES = 10_000_000  # games (or SPSA iterations) one command may ask for: the plan is in memory


class _Number(click.ParamType):
    """An int or float option whose bad value is a one-line error (exit 2), like other bad input:
    not a number, not finite, not positive (`positive`), or above `maximum`."""

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
                raise _CommandError(f"{param.opts[0]} expects {'an' if self.kind is int else 'a'} "
                                    f"{self.name}, not {value!r}") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise _CommandError(f"{param.opts[0]} must be a finite number, not {value}")
        if self.positive and not number > 0:
            raise _CommandError(f"{param.opts[0]} must be positive, not {value}")
        if not self.positive and number < 0:
            raise _CommandError(f"{param.opts[0]} must not be negative, not {value}")
        if number > self.maximum:
            raise _CommandError(f"{param.opts[0]} must be at most {self.maximum:,}, not {value}")
        return number


_scheduler_option = click.option(
    "--scheduler", metavar="ADDRESS", help="Play on a Dask cluster instead: tcp://HOST:PORT of a "
    "running scheduler (or its scheduler file), or local:N for a local cluster of N worker "
    "processes. Needs the dask extra.")


def _refuse_workers_with_scheduler(opts):
    if opts["scheduler"] is not None and opts["workers"] is not None:
        raise _CommandError("--workers is for local processes; with --scheduler the cluster's "
                            "workers play (local:N for N local ones)")


_rule_options = _options(
    click.option("--dynasty", is_flag=True, default=False, help="Each table plays three deals in a "
                 "row; the totals decide."),
    click.option("--variant", metavar="standard|duel", help="duel: Mighty Duel (2 players, 7x7)."),
    click.option("--three-player", metavar="official|bga", help="3-player setup."),
    click.option("--harmony", is_flag=True, default=None, help="+5 with nothing discarded."),
    click.option("--middle-kingdom", is_flag=True, default=None, help="+10 with the castle central."),
    click.option("--tiebreak", metavar="crowns|territory"),
    click.option("--first-picks", metavar="random|abba"),
)


def _session_options(what, *, seed, name_default, resume, last_line, cluster=()):
    """The options of a command that plays and stores games (run, sprt): seed, workers (then the
    `cluster` options), folder, bots, time limits, resume and output. `what` names the thing
    stored ('Tournament', 'Test'); the other arguments are the command's own help texts."""
    return _options(
        click.option("--seed", type=_Number(int, positive=False), help=f"{seed} (default: fresh, "
                     "printed and stored; on an existing --out, the stored one)."),
        click.option("--workers", type=_Number(int), help="Worker processes (default: all cores)."),
        *cluster,
        click.option("--out", metavar="DIR", help=f"{what} folder (default reports/<name>)."),
        click.option("--name", help=f"{what} name (default: {name_default} and a time stamp)."),
        click.option("--bots-dir", "bots_dirs", multiple=True, metavar="DIR",
                     help="A folder of bots, Python modules and TOML files (repeatable)."),
        click.option("--move-time-limit", type=_Number(float), metavar="SECONDS",
                     help="A decision taking longer forfeits the game."),
        click.option("--time-control", metavar="BANK+INC", help="A clock per bot and game: BANK "
                     "seconds, INC seconds added after each decision, e.g. 10+0.1; a bot over "
                     "its bank forfeits (fault time). Combines with --move-time-limit."),
        click.option("--first-move-time", type=_Number(float), metavar="SECONDS",
                     help="The limit of a bot's first decision of each game instead of the move "
                     "limit and the bank (which it does not draw on), e.g. 1.0; needs "
                     "--move-time-limit or --time-control."),
        click.option("--move-time-margin", type=_Number(float, positive=False), metavar="SECONDS",
                     help="Every seat's margin per game: what its decisions may take beyond "
                     "what their clock allows (pipes, scheduler), lent and paid back by its bank, "
                     "before it forfeits (default 0.2). Stored: a resume keeps it."),
        click.option("--isolate", is_flag=True, help="Play every Python entrant in its own process "
                     "(kdtourney serve): a crash or a hang costs the bot its game, not the worker, and "
                     "the clock cuts as for external bots (against cheating: --sandbox). Stored: a "
                     "resume keeps it."),
        click.option("--sandbox", is_flag=True, help="Play every entrant in its own process inside "
                     "a bubblewrap sandbox (bwrap): no network, no other process, no file but its "
                     "own folder and its runtime; limits on memory, processes and output. Stored: "
                     "a resume keeps it."),
        click.option("--bot-memory", type=_Number(int), metavar="MIB", help="With --sandbox: the "
                     "memory of a bot process and its children; past it the bot forfeits (fault "
                     "memory; default 1024)."),
        _sandbox_allow_option,
        click.option("--bot-cpus", type=_Number(float, maximum=1024), metavar="N", help="With "
                     "--sandbox: the CPU quota of a bot process and its children while it decides, "
                     "in cores (default 1; between its decisions it is frozen). Stored: a resume "
                     "keeps it."),
        click.option("--require-limits", is_flag=True, help="With --sandbox: stop with an error "
                     "where a machine cannot enforce every limit (memory, processes, CPU quota, "
                     "freezing), instead of a note."),
        click.option("--startup-timeout", type=_Number(float), metavar="SECONDS",
                     help="Bots in their own process: seconds to start and answer hello (default "
                     "20)."),
        click.option("--hang-timeout", type=_Number(float), metavar="SECONDS", help="A worker making "
                     "no progress this long is replaced (default 600; with --move-time-limit, 10x "
                     "it, at least 30; at least --startup-timeout + 10); in a decision of an "
                     "in-process bot under a clock, sooner: after what the clock allows it plus its "
                     "margin and 2 s."),
        click.option("--resume", metavar="DIR", help=resume),
        click.option("--quiet", "-q", is_flag=True, help=f"Print only errors and the {last_line}."),
        click.option("--no-report", is_flag=True, help="Do not write DIR/index.html at the end."),
    )


# the options that define what is played: --resume DIR plays what DIR stores and refuses them
# (_RULE_PARAMS: tournament.RULE_OPTIONS and dynasty; cli.py imports no engine at start)
_RULE_PARAMS = ("dynasty", "variant", "three_player", "harmony", "middle_kingdom", "tiebreak",
                "first_picks")
_STORED_PARAMS = ("seed", "move_time_limit", "time_control", "first_move_time", "out", "name")
_TOURNAMENT_PARAMS = ("bots", "games", "players", *_RULE_PARAMS, "gauntlet", "lineup",
                      *_STORED_PARAMS)


def _given(ctx, name):
    """Whether option `name` was given on the command line (not a default)."""
    return ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE


def _refuse_on_resume(ctx, params, plays):
    """--resume DIR takes what DIR stores: an option of `params` given as well is an error."""
    given = [f"--{k.replace('_', '-')}" for k in params if _given(ctx, k)]
    if given:
        raise _CommandError(f"--resume DIR {plays}: drop {given[0]} (or re-run the whole command "
                            "with --out DIR)")


def _resumed_registry(bots_dirs, meta, tournament, what, sandbox=None, startup_timeout=None):
    """The registry of a resumed run (`what`: tournament or test): the --bots-dir folders, else the
    stored ones; every stored entrant must resolve in it."""
    from kdtourney.commands import run as runner

    registry = _registry(bots_dirs or runner.stored_bots_dirs(meta), sandbox, startup_timeout)
    runner.check_entrants(registry, tournament, what)
    return registry


def _play_settings(ctx, opts, folder):
    """How the bots are played (kdtourney.match.settings.PlaySettings): the settings stored in `folder`
    (None: a new folder) with those given on the command line over them, refused where they
    differ; --bot-memory, --bot-cpus, --sandbox-allow or --require-limits without a sandbox is an
    error. Known before the bots are looked at: sandboxed, a bot module runs in a sandbox only.
    Sandboxed and played here, what this machine cannot enforce is a note (--require-limits: an
    error)."""
    from kdtourney.match import settings as play
    from kdtourney.commands import run as runner
    from kdtourney import store

    asked = {}
    for flag in ("isolate", "sandbox"):
        if _given(ctx, flag):
            asked[flag] = True
    if opts["move_time_margin"] is not None:
        asked["margin"] = float(opts["move_time_margin"])
    if opts["bot_memory"] is not None:
        asked["bot_memory"] = opts["bot_memory"]
    if opts["bot_cpus"] is not None:
        if opts["bot_cpus"] < 0.1:  # a quota of 1 ms per 10 ms period at least
            raise _CommandError(f"--bot-cpus must be at least 0.1, not {opts['bot_cpus']:g}")
        asked["bot_cpus"] = float(opts["bot_cpus"])
    if opts["sandbox_allow"]:
        asked["sandbox_allow"] = sorted(set(opts["sandbox_allow"]))
    stored = None
    if folder is not None and store.exists(folder):
        stored = play.stored_settings(store.load_config(folder),
                                      played=not store.load_games(folder, ("game",)).empty)
    settings = play.settle(stored, asked, folder)
    for option, what in (("bot_memory", "limits"), ("bot_cpus", "limits"),
                         ("sandbox_allow", "is for"), ("require_limits", "is about")):
        if opts[option] and not settings.sandbox:
            raise _CommandError(f"--{option.replace('_', '-')} {what} sandboxed bots: add "
                                "--sandbox")
    if settings.sandbox and opts["scheduler"] is None:  # a cluster's workers are checked there
        runner.check_sandbox()
        line = runner.check_limits(opts["require_limits"])
        if line and not opts["quiet"]:
            click.echo(f"note: {shown(line)}")
    return settings


def _process_options(opts, settings) -> dict:
    """How the bots are played: run_tournament's keyword arguments."""
    given = {k: opts[k] for k in ("startup_timeout",) if opts[k] is not None}
    return dict(given, play=settings, require_limits=opts["require_limits"])


def _table_options(opts) -> dict:
    """The options that shape every game of a run, test, ladder or tune: rules, dynasty, clocks."""
    from kdtourney.tournament.definition import RULE_OPTIONS

    names = (*RULE_OPTIONS, "dynasty", "move_time_limit", "time_control", "first_move_time")
    return {k: opts[k] for k in names}


def _workers_ahead(opts):
    """Start the workers' fork server (not on a cluster) before anything else, so its imports run
    beside the command's own and its reading of the bots: a local command's first game starts
    about a second sooner. A command refused for its input ends it unused."""
    if not opts["scheduler"]:
        fork_server.start()


def _open_session(ctx, opts, *, params, plays, what, load, prepare, prefix=""):
    """Where a run, test or tune plays and with what: (folder, loaded, registry, play settings,
    meta). With --resume DIR, `load(DIR)` gives (loaded, its table, the stored meta) and the
    options `params` are refused (`plays` says why); else `prepare(registry, seed)` gives
    (loaded, table) for the asked folder, or a new one named after the table."""
    from pathlib import Path

    from kdtourney.commands import run as runner

    _refuse_workers_with_scheduler(opts)
    if opts["resume"]:
        _refuse_on_resume(ctx, params, plays)
        folder = Path(opts["resume"])
        loaded, table, stored_meta = load(folder)
        settings = _play_settings(ctx, opts, folder)
        registry = _resumed_registry(opts["bots_dirs"], stored_meta, table, what,
                                     settings.sandbox_for(folder), opts["startup_timeout"])
        name = stored_meta.get("name", folder.name)
    else:
        folder = runner.asked_folder(opts["out"], opts["name"])
        settings = _play_settings(ctx, opts, folder)
        registry = _registry(opts["bots_dirs"], settings.sandbox_for(folder),
                             opts["startup_timeout"])
        seed = opts["seed"] if opts["seed"] is not None else runner.stored_seed(folder)
        loaded, table = prepare(registry, seed)
        if folder is None:
            folder = runner.new_folder(table, prefix=prefix)
        name = opts["name"] or folder.name
    meta = runner.session_meta(name, registry_dirs=opts["bots_dirs"] or [])
    return folder, loaded, registry, settings, meta


def _write_report(folder, no_report):
    """The report page (or `folder` with --no-report, or when the report fails: a warning)."""
    if no_report:
        return folder
    try:
        from kdtourney.report.html import write_report
        return write_report(folder)
    except Exception as exc:  # the games are stored; the report can be made again later
        click.echo(f"warning: no report ({type(exc).__name__}: {exc}); the games are stored, "
                   f"make it with: kdtourney report {folder}", err=True)
        return folder


@main.command("run")
@click.option("--bots", metavar="SPECS", help="Entrants, comma-separated; parameters with ':', "
              "e.g. greedy,mcts:iterations=500.")
@click.option("--games", type=_Number(int, maximum=MAX_GAMES), default=100, show_default=True,
              help="Games in all, rounded up to whole blocks.")
@click.option("--players", metavar="N[,N]", help="Table size 2, 3 or 4, or a list such as 2,4 "
              "(blocks alternate). Default 2; a lineup's length.")
@_rule_options
@click.option("--gauntlet", metavar="CANDIDATE", help="The candidate against every --bots entrant.")
@click.option("--lineup", metavar="SPECS", help="A fixed table, e.g. greedy,random,random,random.")
@_session_options(
    "Tournament", seed="Tournament seed", name_default="the bots",
    resume="Finish the tournament stored in DIR.", last_line="final line",
    cluster=[_scheduler_option])
@click.pass_context
def run_command(ctx, **opts):
    """Play a tournament: every game stored in DIR/tournament.sqlite as soon as it is finished,
    then the report DIR/index.html.

    Formats: round robin over --bots (default), --gauntlet CANDIDATE, or --lineup. Each deal is
    played under every rotation of the table (a block). Re-running the same command on the same
    --out, or --resume DIR, plays exactly the missing games.
    """
    _workers_ahead(opts)
    from kdtourney.commands import run as runner
    from kdtourney import store
    from kdtourney.tournament import definition as tour
    from kdtourney.terminal.progress import Reporter

    def load(folder):
        tournament, stored_meta = runner.load_tournament(folder)
        return tournament, tournament, stored_meta

    def prepare(registry, seed):
        tournament = tour.prepare(
            registry, bots=opts["bots"], players=opts["players"], games=opts["games"],
            seed=seed, gauntlet=opts["gauntlet"], lineup=opts["lineup"], **_table_options(opts))
        return tournament, tournament

    with _one_line(tour.ArenaError, store.StoreError):
        folder, tournament, registry, settings, meta = _open_session(
            ctx, opts, params=_TOURNAMENT_PARAMS, plays="plays the stored tournament",
            what="tournament", load=load, prepare=prepare)
        with _harness_errors(folder, tour.ArenaError, store.StoreError):
            outcome = runner.run_tournament(tournament, folder, registry,
                                            workers=opts["workers"], meta=meta,
                                            reporter=Reporter(quiet=opts["quiet"]),
                                            hang_timeout=opts["hang_timeout"],
                                            scheduler=opts["scheduler"],
                                            **_process_options(opts, settings))
    stored = outcome.stored_before + outcome.played
    if outcome.interrupted:
        click.echo(f"interrupted: {stored} of {outcome.total} games stored in {folder}; "
                   f"finish with: kdtourney run --resume {folder}", err=True)
        ctx.exit(130)
    if not opts["quiet"]:
        _print_standings(folder)
    shown = _write_report(folder, opts["no_report"])
    faults = store.load_faults(folder)
    forfeits = int((faults["kind"] != "failed").sum())
    failed = faults.loc[faults["kind"] == "failed", "game"].nunique()
    click.echo(f"{shown}: {stored} games" + (f", {forfeits} faults" if forfeits else "")
               + (f", {failed} failed" if failed else "")
               + (f" ({outcome.played} played now)" if outcome.stored_before else ""))


def _print_standings(folder):
    """The standings table in the terminal at the end of a run."""
    from rich.console import Console

    table = _standings_table(folder)
    if table is None:
        return
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(table)


#: The entrant column's least width: at 80 columns the figures' columns leave it this much.
ENTRANT_WIDTH = 12


def _standings_table(folder):
    """The standings of the tournament in `folder` as a rich Table, None before any result."""
    from rich import box
    from rich.table import Table

    from kdtourney.store import failed_games, load_results
    from kdtourney.stats.outcomes import balanced_blocks
    from kdtourney.report.fmt import elo_text

    results = balanced_blocks(load_results(folder))  # as standings() counts them
    if results.empty:
        return None
    failed = failed_games(folder)
    from kdtourney.report.standings import standings

    figures = standings(results)  # the report page's figures and intervals
    summary, elo = figures.summary, figures.elo
    table = Table(title="standings (means; 95% block-bootstrap intervals)", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)  # no column rules: fits 80 columns
    columns = ["entrant", "seats", "win share", "score", "margin", "Elo"]
    with_faults = int("faults" in summary and summary["faults"].sum() > 0)
    with_failed = int(len(failed) > 0)  # games that could not be finished, per entrant seated
    for column in columns + ["faults"] * with_faults + ["failed"] * with_failed:
        if column == "entrant":  # long specs fold; the figures never do
            table.add_column(column, overflow="fold", min_width=ENTRANT_WIDTH)
        else:
            table.add_column(column, justify="right", no_wrap=True)
    for entrant, row in summary.iterrows():
        rating = "-"
        if elo is not None and entrant in elo.index:
            e = elo.loc[entrant]
            rating = elo_text(e["elo"], e["lo"], e["hi"], e["record"])
        table.add_row(str(entrant), str(int(row["games"])),
                      f"{row['win_share']:.3f} [{row['win_share_lo']:.2f}, {row['win_share_hi']:.2f}]",
                      f"{row['score']:.1f}", f"{row['margin']:+.1f}", rating,
                      *[str(int(row["faults"]))] * with_faults,
                      *[str(int(failed.get(entrant, 0)))] * with_failed)
    return table


@main.command("replay")
@click.argument("folder", metavar="DIR")
@click.argument("game", type=_Number(int, positive=False))
@click.option("--step", is_flag=True, help="Step through the game: the position after each move "
              "(Enter: the next, b: the one before, a number: that move, q: quit).")
@click.option("--html", is_flag=True, help="Write the game's page instead, to watch it move by "
              "move in a browser: DIR/game-GAME.html (--out: another file).")
@click.option("--out", metavar="FILE", help="With --html: the page's file.")
def replay_command(folder, game, step, html, out):
    """Print game GAME of the tournament in DIR move by move, with the final kingdoms; --step
    steps through its positions, --html writes a page that shows it."""
    from kdtourney.terminal.replay import positions, replay_text
    from kdtourney.store import StoreError

    if step and html:
        raise _CommandError("--step shows the game here, --html writes its page: give one")
    if out is not None and not html:
        raise _CommandError("--out is the file of --html's page: add --html")
    with _one_line(StoreError):
        if html:
            from kdtourney.report.html import write_game_page

            try:
                click.echo(write_game_page(folder, game, out))
            except OSError as exc:
                raise _CommandError(f"cannot write the page: {exc}") from None
        elif step:
            _step_through(positions(folder, game))
        else:
            click.echo(replay_text(folder, game))


def _step_through(frames):
    """Show one position at a time, reading what to show next from the standard input (Enter,
    b, a move's number, q) until q or the end of the input."""
    k, note = 0, ""
    while True:
        click.clear()  # on a terminal only
        click.echo(frames[k])
        if note:
            click.echo(note)
        try:
            answer = click.prompt("Enter: next, b: back, a number: that move, q: quit",
                                  default="", show_default=False).strip().lower()
        except click.exceptions.Abort:  # the end of the input (Ctrl-D)
            return
        note = ""
        if answer == "q":
            return
        if answer == "":
            if k == len(frames) - 1:
                return
            k += 1
        elif answer == "b":
            k = max(0, k - 1)
        elif answer.isdigit() and int(answer) < len(frames):
            k = int(answer)
        else:
            note = f"{answer!r}: give Enter, b, q or a move from 0 to {len(frames) - 1}"


@main.command("play")
@click.option("--against", "against", multiple=True, required=True, metavar="BOT",
              help="A bot to play against, as --bots takes it (built-in, a --bots-dir bot, a "
              "KDTP program's TOML); repeat for a table of three or four.")
@click.option("--games", type=_Number(int, maximum=1000), default=1, show_default=True,
              help="Games to play, one after the other, your seat rotating as in a run's block "
              "(the same command again plays the next ones).")
@_rule_options
@click.option("--seed", type=_Number(int, positive=False), help="Seed (default: fresh; on an "
              "existing --out, the stored one).")
@click.option("--out", metavar="DIR", help="The games' folder (default "
              "reports/play-<bots>-<time>); the same command on it plays the games it lacks.")
@click.option("--name", help="The folder's name (default: the bots and a time stamp).")
@_bots_dir_option
@click.option("--move-time-limit", type=_Number(float), metavar="SECONDS",
              help="Every seat's limit per decision, yours too.")
@click.option("--time-control", metavar="BANK+INC",
              help="Every seat's clock, yours too, e.g. 300+5.")
@click.option("--first-move-time", type=_Number(float), metavar="SECONDS",
              help="The limit of each seat's first decision instead.")
@click.option("--move-time-margin", type=_Number(float, positive=False), metavar="SECONDS",
              help="Every seat's margin per game beyond its clock (default 0.2).")
@click.option("--sandbox", is_flag=True, help="Every bot in a bubblewrap sandbox, as in a run.")
@click.option("--bot-memory", type=_Number(int), metavar="MIB",
              help="With --sandbox: a bot's memory limit (default 1024).")
@_sandbox_allow_option
@click.option("--bot-cpus", type=_Number(float, maximum=1024), metavar="N",
              help="With --sandbox: a bot's CPU quota while it decides (default 1).")
@click.option("--require-limits", is_flag=True, help="With --sandbox: stop where this machine "
              "cannot enforce every limit.")
@click.option("--startup-timeout", type=_Number(float), metavar="SECONDS",
              help="Seconds a bot has to start and answer hello (default 20).")
@click.option("--port", type=_Number(int, positive=False, maximum=65535), default=0,
              help="The page's port on 127.0.0.1 (default: a free one).")
@click.option("--no-browser", is_flag=True, help="Print the page's address without opening it.")
@click.pass_context
def play_command(ctx, **opts):
    """Play Kingdomino in your browser against bots: a page served on this machine only shows the
    game and your legal placements; the bots play as in a tournament (each in its own process,
    on the clock, forfeiting on a fault; --sandbox: sandboxed), the engine checks your every
    move, and each finished game is stored in DIR like a run's (report, replay and export read
    it)."""
    import webbrowser

    from kdtourney.commands import play as human, run as runner
    from kdtourney import store
    from kdtourney.tournament import definition as tour

    opts.update(scheduler=None, isolate=False, quiet=False)  # run's options _play_settings reads
    with _one_line(tour.ArenaError, store.StoreError):
        folder = runner.asked_folder(opts["out"], opts["name"])
        settings = _play_settings(ctx, opts, folder)
        registry = _registry(opts["bots_dirs"], settings.sandbox_for(folder),
                             opts["startup_timeout"])
        seed = opts["seed"] if opts["seed"] is not None else runner.stored_seed(folder)
        table = human.lineup(registry, list(opts["against"]), games=opts["games"], seed=seed,
                             **_table_options(opts))
        folder = folder or runner.new_folder(table, prefix="play-")
        meta = runner.session_meta(opts["name"] or folder.name, registry_dirs=opts["bots_dirs"])
        from kdtourney.commands.play_page import Server

        board = human.Board()
        try:
            server = Server(board, f"{table.describe()}: {folder.name}", opts["port"])
        except OSError as exc:
            raise _CommandError(f"cannot serve the page on 127.0.0.1:{opts['port']}: "
                                f"{exc.strerror or exc}") from None
        server.start()
        click.echo(f"play at {server.url} (the games are stored in {folder}; Ctrl-C stops)")
        if not opts["no_browser"]:
            webbrowser.open(server.url)
        try:
            stored = human.play_games(table, folder, registry, board, play=settings, meta=meta,
                                      startup_timeout=opts["startup_timeout"],
                                      require_limits=opts["require_limits"])
            if stored:
                shown = _write_report(folder, False)
                board.finish(f"{stored} game{'s' if stored > 1 else ''} stored in {folder}; "
                             f"its report: {shown}. You can close this tab.")
            else:
                board.finish(f"{folder} holds every game of its plan: nothing left to play.")
            board.wait_shown(10.0)
        except (KeyboardInterrupt, human.PersonLeft):
            click.echo(f"interrupted: the game being played is not stored; those that ended "
                       f"are in {folder}", err=True)
            ctx.exit(130)
        finally:
            server.stop()
    click.echo(f"{folder}: {stored} game{'' if stored == 1 else 's'} played")


@main.command("export")
@click.argument("folder", metavar="DIR")
@click.option("--format", "fmt", metavar="csv|parquet", help="Default: from the file name "
              "(.csv, .parquet or .pq).")
@click.option("-o", "--output", required=True, metavar="FILE")
@click.option("--table", default="results", show_default=True,
              metavar="results|games|faults|entrants|blocks|sessions",
              help="results: one row per player per game, with the game's block and n_players; "
              "entrants: what code played for each entrant (digest, identity); blocks: each "
              "block's table (seats, the entrants' specs, deal seeds); sessions: when the "
              "folder was made and resumed, by which command.")
def export_command(folder, fmt, output, table):
    """Write a table of the tournament in DIR to a CSV or Parquet file."""
    from kdtourney.store import StoreError, export_table

    if fmt is None:
        suffix = os.path.splitext(output)[1].lower()
        fmt = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}.get(suffix)
        if fmt is None:
            raise _CommandError(f"cannot tell the format of {output}: name it .csv or .parquet, "
                                "or give --format")
    with _one_line(StoreError):
        rows = export_table(folder, output, fmt, table)
    click.echo(f"{output}: {rows} rows ({table})")


@main.command("report")
@click.argument("folder", metavar="DIR")
@click.option("--anchor", metavar="NAME=VALUE", help="Pin one entrant's Elo (default: mean 0), "
              "e.g. --anchor greedy=0.")
@click.option("--open", "open_page", is_flag=True, help="Open the page in the web browser.")
def report_command(folder, anchor, open_page):
    """Rebuild the HTML report DIR/index.html from the tournament stored in DIR."""
    from kdtourney.store import StoreError
    from kdtourney.report.html import ReportError, write_report

    with _one_line(StoreError, ReportError):
        try:
            path = write_report(folder, anchor=anchor)
        except OSError as exc:
            raise _CommandError(f"cannot write the report into {folder}: "
                                f"{exc.strerror or exc}") from None
        except (ValueError, TypeError, KeyError) as exc:  # a store's rows changed by hand
            raise _CommandError(f"cannot build the report of {folder} from its store: "
                                f"{exc}") from None
    click.echo(str(path))
    if open_page:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())


@main.command("ratings")
@click.argument("folders", nargs=-1, required=True, metavar="FOLDER...")
@click.option("--out", default="reports/ratings", show_default=True, metavar="DIR",
              help="Write the page DIR/index.html.")
@click.option("--anchor", metavar="NAME=ELO", help="Pin one entrant's Elo (default: mean 0), "
              "e.g. --anchor greedy=0.")
@click.option("--players", metavar="N[,N]", help="Player counts to pool, e.g. 2,4 (default: the "
              "count with the most games, or every size of a ladder that plays several).")
def ratings_command(folders, out, anchor, players):
    """One rating list over the games of many tournament folders (run and sprt alike; a folder
    that holds folders is searched).

    All games are fitted at once (Bradley-Terry, block-bootstrap intervals, as in a tournament's
    report). An entrant is a name and the code that played for it: the same name with other code
    is another entrant (name@digest). Games are pooled only under the same rules; each folder left
    out and each entrant that no game connects to the others gets one line saying why. Prints the
    list and writes DIR/index.html. Exit status 2 only when nothing can be rated.
    """
    import sys

    from kdtourney import store
    from kdtourney.tournament.definition import ArenaError, parse_players
    from kdtourney.report.html import ReportError, parse_anchor
    from kdtourney.report.pool import PoolError, rating_list
    from kdtourney.report.pool_html import write_rating_list

    with _one_line(ArenaError, ReportError):
        counts = parse_players(players) if players is not None else None
        anchor = parse_anchor(anchor)
    if store.exists(out):
        raise _CommandError(f"{out} holds a tournament, whose report is {out}/index.html: choose "
                            "another --out for the rating list")
    try:
        found = rating_list(folders, players=counts, anchor=anchor)
    except PoolError as exc:
        for line in exc.notes:
            click.echo(line)
        raise _CommandError(str(exc)) from None
    _print_rating_list(found)
    for line in found.notes():
        click.echo(line)
    command = " ".join(["kdtourney"] + sys.argv[1:]) if sys.argv[1:2] == ["ratings"] else None
    try:
        path = write_rating_list(found, out, command)
    except OSError as exc:
        raise _CommandError(f"cannot write the page into {out}: {exc.strerror or exc}") from None
    click.echo(f"{path}: {len(found.rated)} entrants rated from {found.n_games} games in "
               f"{found.n_folders} folders" + (f"; {len(found.skipped)} skipped"
                                                if found.skipped else ""))


def _print_rating_list(found):
    """The rating list in the terminal: rank, entrant, Elo with interval, games, folders, code
    (and failed games, when there are any)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from kdtourney.report.fmt import elo_text

    players = "/".join(str(p) for p in found.players)
    table = Table(title=f"rating list ({players}-player games; 95% block-bootstrap intervals)",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    with_failed = int(any(e.failed for e in found.rated))  # games that could not be finished
    with_groups = int(found.groups > 1)  # unconnected groups, each on a scale of its own
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("entrant", overflow="fold")
    for column in ("group",) * with_groups + ("Elo", "games", "folders", "code") \
            + ("failed",) * with_failed:
        table.add_column(column, justify="left" if column == "code" else "right", no_wrap=True)
    for rank, e in enumerate(found.rated, 1):
        table.add_row(str(rank), e.name, *[str(e.group)] * with_groups,
                      elo_text(e.elo, e.lo, e.hi, e.record), str(e.games),
                      str(len(e.folders)), e.digest or "unknown", *[str(e.failed)] * with_failed)
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(table)


# --- ladder (a standing rating list of the bots in folders) -------------------------------------

_LADDER_PARAMS = ("players", *_RULE_PARAMS, *_STORED_PARAMS)


def _duration(text):
    """'90', '90s', '10m', '2h' -> seconds; a bad value is a one-line error."""
    if text is None:
        return None
    units = {"s": 1, "m": 60, "h": 3600}
    number, unit = (text[:-1], text[-1]) if text and text[-1] in units else (text, "s")
    try:
        seconds = float(number) * units[unit]
    except ValueError:
        raise _CommandError(f"--until expects a duration such as 90s, 10m or 2h, not {text!r}") \
            from None
    if not seconds > 0:
        raise _CommandError(f"--until must be positive, not {text}")
    return seconds


@main.command("ladder")
@click.option("--bots", metavar="SPECS", help="Fixed reference entrants besides the folders' bots, "
              "e.g. greedy,mcts:time=0.1.")
@click.option("--games", type=_Number(int, maximum=MAX_GAMES),
              help="Stop once the ladder holds this many games (default: run until Ctrl-C).")
@click.option("--until", metavar="DURATION", help="Stop after this long, e.g. 90s, 10m, 2h.")
@click.option("--players", metavar="N[,N]", help="Table size 2, 3 or 4, or a list such as 2,4 "
              "(blocks alternate). Default 2.")
@_rule_options
@_session_options(
    "Ladder", seed="Ladder seed", name_default="ladder",
    resume="Continue the ladder stored in DIR (its folders, references and rules).",
    last_line="final line", cluster=[_scheduler_option])
@click.pass_context
def ladder_command(ctx, **opts):
    """Rate every bot of the --bots-dir folders against the field, for as long as it runs.

    Every bot in the folders (with its default parameters; a folder's ladder.txt may list more
    specs, one per line) and every --bots reference is an entrant. The folders are watched: a new
    bot enters within seconds, a changed bot enters as a new version (the old one stays on the
    list, superseded), a removed bot is retired. Each step plays a duplicate block at a table the
    matchmaker chooses: uncertain entrants first, opponents near in rating. Games go to
    DIR/tournament.sqlite (default DIR: ./ladder); the page DIR/index.html is rewritten as results
    come in and reloads itself. Re-running the same command, or --resume DIR, continues it.
    """
    _workers_ahead(opts)
    import time
    from pathlib import Path

    from kdtourney.commands import ladder, run as runner
    from kdtourney import store
    from kdtourney.tournament import definition as tour
    from kdtourney.commands.beside import beside_play
    from kdtourney.terminal.display import LadderDisplay
    from kdtourney.report.ladder import ladder_board, write_ladder_page
    from kdtourney.report.page import REPORT_FILE, write_page

    until = _duration(opts["until"])
    with _one_line(tour.ArenaError, store.StoreError):
        _refuse_workers_with_scheduler(opts)
        if opts["resume"]:
            _refuse_on_resume(ctx, _LADDER_PARAMS, "continues the stored ladder")
            folder = Path(opts["resume"])
            config = ladder.stored_config(folder)
            if config is None:
                raise tour.ArenaError(f"no ladder in {folder} (no {store.STORE_FILE})")
            stored_meta = store.load_config(folder).get("meta", {})
            settings = _play_settings(ctx, opts, folder)
            bots_dirs = opts["bots_dirs"] or runner.stored_bots_dirs(stored_meta)
            references = tour.split_list(opts["bots"]) or stored_meta.get("ladder_bots", [])
            name = stored_meta.get("name", folder.name)
        else:
            folder = runner.asked_folder(opts["out"], opts["name"]) or Path("ladder")
            settings = _play_settings(ctx, opts, folder)
            stored = ladder.stored_config(folder)
            seed = opts["seed"] if opts["seed"] is not None else (stored.seed if stored else None)
            config = ladder.prepare_ladder(players=opts["players"], seed=seed,
                                           **_table_options(opts))
            bots_dirs, references = opts["bots_dirs"], tour.split_list(opts["bots"])
            name = opts["name"] or folder.name
        if not bots_dirs and not references:
            raise tour.ArenaError("no entrants: give --bots-dir FOLDER (watched for bots) and/or "
                                  "--bots SPECS")
        from kdtourney.registry import EntrantError

        # a bad folder or bot: one line
        registry = _registry(bots_dirs, settings.sandbox_for(folder), opts["startup_timeout"])
        with _one_line(EntrantError):
            for spec in references:
                registry.resolve(spec)
        if not bots_dirs and len(set(references)) < 2:  # no folder to watch: it would wait forever
            raise tour.ArenaError("a ladder needs two entrants or more: give more --bots, or a "
                                  "--bots-dir to watch")
        meta = dict(runner.session_meta(name, registry_dirs=bots_dirs), ladder_bots=references)
        display = LadderDisplay(quiet=opts["quiet"])
        due = [0.0]  # when the next page may start
        building = [None]  # the page being built beside play (a Future)

        def page(folder):
            """After a chunk: take the list and the page built beside play (the page is written
            here, so that the process beside play, ended at once when play ends, never writes
            one), and start the next when due: 5 s after the last started, and not before nine
            times its work has passed since it ended (a long history's page takes seconds: it
            gets at most a tenth of the core it runs on, at the lowest priority). The ladder does
            not wait for it."""
            if building[0] is not None and building[0].done():
                rows, html, seconds = building[0].result()
                display.board(rows)
                if html is not None:
                    write_page(html, Path(folder) / REPORT_FILE)
                building[0] = None
                due[0] = max(due[0], time.monotonic() + 9 * seconds)
            if building[0] is None and time.monotonic() >= due[0]:
                building[0] = pages.submit(_ladder_page, str(folder), not opts["no_report"])
                due[0] = time.monotonic() + 5

        with beside_play() as pages, _harness_errors(folder, tour.ArenaError, store.StoreError):
            outcome = ladder.play_ladder(
                config, folder, bots_dirs, references, workers=opts["workers"], meta=meta,
                display=display, games=opts["games"], until=until, scheduler=opts["scheduler"],
                after_chunk=page, hang_timeout=opts["hang_timeout"],
                **_process_options(opts, settings))
    board = ladder_board(folder)  # the last page, from everything stored
    if not opts["no_report"]:
        write_ladder_page(folder, board, running=False)
    if not opts["quiet"]:
        _print_ladder(board)
    active = sum(r["status"] in ("rated", "provisional", "new") for r in board.rows)
    click.echo(f"{folder / 'index.html' if not opts['no_report'] else folder}: "
               f"{outcome.stored} games, {active} active entrants ({outcome.played} played now)"
               + ("; stopped by Ctrl-C, continue with: kdtourney ladder --resume " + str(folder)
                  if outcome.interrupted else ""))
    if outcome.interrupted:
        ctx.exit(130)


def _ladder_page(folder: str, write: bool) -> tuple[list, str | None, float]:
    """In the page process: the ladder's list (and, with `write`, its page marked running) from
    what is stored; returns the list's rows for the terminal, the page (or None) and the CPU
    seconds it took."""
    import time

    from kdtourney.store import reader
    from kdtourney.report.ladder import ladder_board, ladder_page

    started = time.process_time()
    with reader(folder):  # the list and the page of one state of the store
        board = ladder_board(folder)
        html = ladder_page(folder, board, running=True) if write else None
    return board.rows, html, time.process_time() - started


def _print_ladder(board):
    """The ladder's list in the terminal: rank, entrant, Elo with interval, games, version,
    status."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    table = Table(title="ladder (95% block-bootstrap intervals)", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("#", "entrant", "Elo", "games", "version", "status"):
        table.add_column(column, justify="left" if column in ("entrant", "status") else "right",
                         no_wrap=column != "entrant", overflow="fold")
    for r in board.rows:
        table.add_row(str(r["rank"] or "-"), r["name"], r["elo_text"], str(r["games"]),
                      str(r["version"]), r["status"])
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(table)


# --- sprt (sequential A/B test of a bot change) --------------------------------------------------

class _Real(click.ParamType):
    """A finite float of any sign; a bad value is a one-line error (exit 2)."""

    name = "number"

    def convert(self, value, param, ctx):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise _CommandError(f"{param.opts[0]} expects a number, not {value!r}") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise _CommandError(f"{param.opts[0]} must be a finite number, not {value}")
        return number


_SPRT_PARAMS = ("candidate", "baseline", "elo0", "elo1", "alpha", "beta", "players", *_RULE_PARAMS,
                *_STORED_PARAMS)


@main.command("sprt")
@click.option("--candidate", metavar="SPEC", help="The bot under test, e.g. mcts:iterations=2000.")
@click.option("--baseline", metavar="SPEC", help="The bot it is compared with, e.g. "
              "mcts:iterations=1000; it takes all the other seats.")
@click.option("--elo0", type=_Real(), default=0.0, show_default=True,
              help="H0: the candidate is not more than ELO0 stronger.")
@click.option("--elo1", type=_Real(), default=10.0, show_default=True,
              help="H1: the candidate is at least ELO1 stronger (ELO1 > ELO0).")
@click.option("--alpha", type=_Real(), default=0.05, show_default=True,
              help="At most this chance of accepting H1 when the candidate is no more than "
              "ELO0 stronger, in (0, 0.5).")
@click.option("--beta", type=_Real(), default=0.05, show_default=True,
              help="At most this chance of accepting H0 when the candidate is ELO1 stronger or "
              "more, in (0, 0.5).")
@click.option("--players", metavar="2|3|4", help="Table size (default 2): the candidate and "
              "PLAYERS-1 baselines.")
@click.option("--max-games", type=_Number(int, maximum=MAX_GAMES), default=20_000,
              show_default=True,
              help="Stop undecided after this many games (rounded up to whole blocks).")
@_rule_options
@_session_options(
    "Test", seed="Seed of the deals", name_default="sprt, the bots",
    resume="Continue the test stored in DIR (--max-games may change its cap).",
    last_line="verdict line", cluster=[_scheduler_option])
@click.pass_context
def sprt_command(ctx, **opts):
    """Sequential A/B test: is --candidate more than --elo0 Elo stronger than --baseline? `H1
    accepted` says it is; `H0 accepted` says it is not shown to be --elo1 stronger (not that it
    is no stronger).

    Plays duplicate blocks (one deal under every rotation of the table: the candidate and
    PLAYERS-1 baselines) in chunks, and after each chunk runs a generalized SPRT on the block
    scores (the candidate's pairwise score against the baseline seats) over the complete blocks in
    block order. It stops at the first block where the log-likelihood ratio leaves its bounds, and
    the last line says `H1 accepted: ...`, `H0 accepted: ...`, or `undecided after N games ...` at
    --max-games, with the Elo estimate corrected for the stopping. The decision and the block where it falls depend only on the seed and the test,
    not on --workers: blocks that the last chunk played past the decision are stored but not
    counted.

    Exit status 0 for all three verdicts (each is a result), 2 for bad input, 130 when
    interrupted. Every game is stored in DIR/tournament.sqlite with the test and its LLR path
    (table sprt), then the report DIR/index.html is written. Re-running the same command on the same
    --out, or --resume DIR, continues from the stored blocks and reaches the same decision.
    """
    _workers_ahead(opts)
    from kdtourney.commands import sprt as sequential
    from kdtourney import store
    from kdtourney.tournament import definition as tour
    from kdtourney.terminal.display import SprtDisplay

    def load(folder):
        tournament, test, stored_meta = sequential.load_test(folder)
        if _given(ctx, "max_games"):
            tournament = sequential.with_cap(tournament, opts["max_games"])
        return (tournament, test), tournament, stored_meta

    def prepare(registry, seed):
        tournament, test = sequential.prepare_test(
            registry, candidate=opts["candidate"], baseline=opts["baseline"],
            elo0=opts["elo0"], elo1=opts["elo1"], alpha=opts["alpha"], beta=opts["beta"],
            players=opts["players"], max_games=opts["max_games"], seed=seed,
            **_table_options(opts))
        return (tournament, test), tournament

    with _one_line(tour.ArenaError, store.StoreError):
        folder, (tournament, test), registry, settings, meta = _open_session(
            ctx, opts, params=_SPRT_PARAMS, plays="continues the stored test", what="test",
            load=load, prepare=prepare, prefix="sprt-")
        with _harness_errors(folder, tour.ArenaError, store.StoreError):
            outcome = sequential.play_sprt(tournament, test, folder, registry,
                                           workers=opts["workers"], meta=meta,
                                           display=SprtDisplay(quiet=opts["quiet"]),
                                           hang_timeout=opts["hang_timeout"],
                                           scheduler=opts["scheduler"],
                                           **_process_options(opts, settings))
    stored = outcome.state.stored
    if outcome.interrupted:
        click.echo(f"interrupted: {outcome.verdict_line()}; {stored} games stored in {folder}; "
                   f"continue with: kdtourney sprt --resume {folder}", err=True)
        ctx.exit(130)
    shown = _write_report(folder, opts["no_report"])
    if not opts["quiet"]:
        past = outcome.past_decision
        click.echo(f"{shown}: {stored} games stored" + (f" ({outcome.played} played now)"
                                                         if outcome.stored_before else "")
                   + (f"; {past} played past the decision are not counted" if past else ""))
    click.echo(outcome.verdict_line())


# --- tune (SPSA tuning of a bot's parameters) ----------------------------------------------------

def _play_verify(opts, test, registry, table, tuned, start, folder, meta, settings):
    """The tuned spec against the start spec in FOLDER/verify: --verify N games, or an SPRT of
    at most N games (`test`)."""
    from kdtourney.commands import tune as tuning

    if test is None:
        from kdtourney.terminal.progress import Reporter

        return tuning.verify(registry, table, tuned, start, opts["verify"], folder,
                             workers=opts["workers"], meta=meta,
                             reporter=Reporter(quiet=opts["quiet"]), **settings)
    from kdtourney.terminal.display import SprtDisplay

    return tuning.verify_sprt(registry, table, tuned, start, opts["verify"], folder, test,
                              workers=opts["workers"], meta=meta,
                              display=SprtDisplay(quiet=opts["quiet"]), **settings)


def _verify_test(opts):
    """The SPRT of --verify-elo0/--verify-elo1 (checked before the tune plays), or None for a
    verify of a fixed number of games."""
    from kdtourney.commands import tune as tuning

    given = [f"--verify-{k}" for k in ("elo0", "elo1", "alpha", "beta")
             if opts[f"verify_{k}"] is not None]
    if not given:
        return None
    if opts["verify_elo0"] is None and opts["verify_elo1"] is None:
        raise _CommandError(f"{given[0]} is for a sequential verify: give --verify-elo0 and "
                            "--verify-elo1 as well")
    if not opts["verify"]:
        raise _CommandError(f"{given[0]} makes --verify N an SPRT of at most N games: give "
                            "--verify N as well")
    defaults = {"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05}
    return tuning.verify_test(**{k: d if opts[f"verify_{k}"] is None else opts[f"verify_{k}"]
                                 for k, d in defaults.items()})


_TUNE_PARAMS = ("bot", "param", "players", "iterations", "against", "batch", "blocks",
                *_RULE_PARAMS, *_STORED_PARAMS)


@main.command("tune")
@click.argument("bot", metavar="BOT[:key=value...]", required=False)
@click.option("--param", multiple=True, metavar="NAME=START,MIN,MAX[,C_END[,R_END]]",
              help="A parameter to tune (repeatable). Defaults: C_END (the perturbation at the "
              "end) = (MAX-MIN)/20; R_END (the learning rate at the end) such that theta+ "
              "scoring 75% at every iteration would move the parameter across its range over the "
              "run. An int parameter takes whole values, rounded at random.")
@click.option("--players", metavar="2|3|4", help="Table size (default 2): theta+, theta- and "
              "PLAYERS-2 --against opponents.")
@click.option("--iterations", type=_Number(int, maximum=MAX_GAMES), default=1000, show_default=True,
              help="SPSA iterations; each plays --blocks duplicate blocks.")
@click.option("--against", metavar="SPEC[,SPEC]", help="The other seats at 3 or 4 players: one "
              "spec for all, or one per seat (default: BOT at its start values).")
@click.option("--batch", type=_Number(int), default=16, show_default=True,
              help="Iterations played at once from the same values (the values then depend on "
              "the seed only, not on --workers).")
@click.option("--blocks", type=_Number(int), default=1, show_default=True,
              help="Duplicate blocks (deals under every rotation) per iteration.")
@click.option("--verify", type=_Number(int, maximum=MAX_GAMES), metavar="N",
              help="At the end, play the tuned values against the start values over N games "
              "(rounded up to whole deals) and print the gain with its 95% interval; with "
              "--verify-elo0/--verify-elo1, over at most N games, stopping as `kdtourney sprt` "
              "does.")
@click.option("--verify-elo0", type=_Real(), metavar="ELO0",
              help="Make --verify an SPRT (as `kdtourney sprt --elo0`, the tune the candidate, "
              "its start values the baseline): H0, the tune is not more than ELO0 stronger "
              "[default: 0].")
@click.option("--verify-elo1", type=_Real(), metavar="ELO1",
              help="Make --verify an SPRT: H1, the tune is at least ELO1 stronger [default: 10].")
@click.option("--verify-alpha", type=_Real(), metavar="ALPHA",
              help="The verify SPRT's --alpha [default: 0.05].")
@click.option("--verify-beta", type=_Real(), metavar="BETA",
              help="The verify SPRT's --beta [default: 0.05].")
@_rule_options
@_session_options(
    "Tune", seed="Seed of the deals and perturbations", name_default="tune, the bot",
    resume="Continue the tune stored in DIR.", last_line="tuned spec",
    cluster=[_scheduler_option])
@click.pass_context
def tune_command(ctx, **opts):
    """Tune BOT's numeric parameters by play (SPSA, as fishtest and OpenBench): every iteration
    perturbs all the --param values at once by +-c_k, plays theta+ against theta- on duplicate
    deals, and steps the values along theta+'s score.

    Prints the tuned values as a bot spec at the end; DIR/tune.html shows every parameter's path
    and the schedules; every game and iteration is stored in DIR/tournament.sqlite. Re-running the
    same command on the same --out, or --resume DIR, continues and ends at the same values.
    """
    _workers_ahead(opts)
    from kdtourney import store
    from kdtourney.commands import tune as tuning
    from kdtourney.tournament import definition as tour
    from kdtourney.terminal.display import TuneDisplay

    def load(folder):
        table, tune, stored_meta = tuning.load_tune(folder)
        return (table, tune), table, stored_meta

    def prepare(registry, seed):
        table, tune = tuning.prepare_tune(
            registry, opts["bot"], opts["param"], players=opts["players"],
            iterations=opts["iterations"], against=opts["against"], seed=seed,
            batch=opts["batch"], blocks=opts["blocks"], **_table_options(opts))
        return (table, tune), table

    with _one_line(tour.ArenaError, store.StoreError):
        verify_test = _verify_test(opts)
        folder, (table, tune), registry, play, meta = _open_session(
            ctx, opts, params=_TUNE_PARAMS, plays="continues the stored tune", what="tune",
            load=load, prepare=prepare, prefix="tune-")
        settings = dict(hang_timeout=opts["hang_timeout"], scheduler=opts["scheduler"],
                        **_process_options(opts, play))
        with _harness_errors(folder, tour.ArenaError, store.StoreError):
            outcome = tuning.play_tune(table, tune, folder, registry, workers=opts["workers"],
                                       meta=meta, display=TuneDisplay(quiet=opts["quiet"]),
                                       **settings)
    if outcome.interrupted:
        click.echo(f"interrupted after {outcome.state.done} of {tune.schedule.iterations} "
                   f"iterations ({outcome.state.stored} games stored in {folder}); continue with: "
                   f"kdtourney tune --resume {folder}", err=True)
        ctx.exit(130)
    from kdtourney.report.tune_page import write_tune_page

    page = write_tune_page(folder)
    if not opts["no_report"]:
        _write_report(folder, False)
    if not opts["quiet"]:
        click.echo(f"{page}: {outcome.state.stored} games, {tune.schedule.iterations} iterations"
                   + (f" ({outcome.played} games played now)" if outcome.stored_before else "")
                   + f"; the bots thought for {outcome.decision_seconds:.0f} s in all")
        click.echo(f"tuned values: {tuning.values_text(tune, outcome.theta)} "
                   f"(start: {tuning.values_text(tune, tune.start)})")
    start = tune.spec(tune.start)
    if opts["verify"] and outcome.tuned_spec() == start:
        click.echo("the tune ended at its start values: nothing to verify")
    elif opts["verify"]:
        with _one_line(tour.ArenaError, store.StoreError), \
                _harness_errors(folder, tour.ArenaError, store.StoreError):
            verdict = _play_verify(opts, verify_test, registry, table, outcome.tuned_spec(),
                                   start, folder, meta, settings)
        if verdict.interrupted:
            click.echo(f"interrupted while verifying: re-run the command to finish ({folder}/"
                       f"{tuning.VERIFY_DIR} keeps the games played)", err=True)
            ctx.exit(130)
        click.echo(verdict.line())
    click.echo(outcome.tuned_spec())
