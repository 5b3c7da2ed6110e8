"""From a playing command's options to what it plays with: its folder, registry, play settings.

    open_session(ctx, opts, ...)   (folder, what it plays, registry, play settings, meta) of a new
                                   run, test or tune, or of one resumed (--resume DIR)
    play_settings(ctx, opts, folder), registry(...), refuse_on_resume(...)
    setup_options(opts, settings)  the kdtourney.commands.setup.Options of the command line
    table_options(opts)            the rules and clocks every game of the command plays under
    workers_ahead(opts), write_report(folder, no_report)

Errors are the user's (UserError, ArenaError): one line, exit 2.
"""
# The library is imported inside the functions: `kdtourney --help` imports no numba or pandas.

from pathlib import Path

import click

from kdtourney.cli.options import given
from kdtourney.errors import UserError
from kdtourney.service import fork_server
from kdtourney.text import shown


def registry(bots_dirs, sandbox=None, startup_timeout=None):
    """The BotRegistry of these bot folders (BotsDirError, DuplicateBotError: one line).
    sandbox (--sandbox): bot modules run in it only, where they are asked what they define, each
    within `startup_timeout` seconds (default 20)."""
    from kdtourney.external import DEFAULT_STARTUP_TIMEOUT
    from kdtourney.registry import BotRegistry

    return BotRegistry(bots_dirs, sandbox=sandbox,
                       startup_timeout=startup_timeout or DEFAULT_STARTUP_TIMEOUT)


def refuse_workers_with_scheduler(opts):
    if opts["scheduler"] is not None and opts["workers"] is not None:
        raise UserError("--workers is for local processes; with --scheduler the cluster's "
                        "workers play (local:N for N local ones)")


def refuse_on_resume(ctx, params, plays):
    """--resume DIR takes what DIR stores: an option of `params` given as well is an error."""
    named = [f"--{k.replace('_', '-')}" for k in params if given(ctx, k)]
    if named:
        raise UserError(f"--resume DIR {plays}: drop {named[0]} (or re-run the whole command "
                        "with --out DIR)")


def resumed_registry(bots_dirs, meta, tournament, what, sandbox=None, startup_timeout=None):
    """The registry of a resumed run (`what`: tournament or test): the --bots-dir folders, else the
    stored ones; every stored entrant must resolve in it."""
    from kdtourney.commands.folders import check_entrants, stored_bots_dirs

    found = registry(bots_dirs or stored_bots_dirs(meta), sandbox, startup_timeout)
    check_entrants(found, tournament, what)
    return found


def asked_settings(ctx, opts) -> dict:
    """The play settings given on the command line (kdtourney.match.settings' names)."""
    asked: dict[str, object] = {flag: True for flag in ("isolate", "sandbox")
                                if given(ctx, flag)}
    if opts["move_time_margin"] is not None:
        asked["margin"] = float(opts["move_time_margin"])
    if opts["bot_memory"] is not None:
        asked["bot_memory"] = opts["bot_memory"]
    if opts["bot_cpus"] is not None:
        if opts["bot_cpus"] < 0.1:  # a quota of 1 ms per 10 ms period at least
            raise UserError(f"--bot-cpus must be at least 0.1, not {opts['bot_cpus']:g}")
        asked["bot_cpus"] = float(opts["bot_cpus"])
    if opts["sandbox_allow"]:
        asked["sandbox_allow"] = sorted(set(opts["sandbox_allow"]))
    return asked


def play_settings(ctx, opts, folder):
    """How the bots are played (kdtourney.match.settings.PlaySettings): the settings stored in
    `folder` (None: a new folder) with those given on the command line over them, refused where
    they differ; --bot-memory, --bot-cpus, --sandbox-allow or --require-limits without a sandbox
    is an error. Known before the bots are looked at: sandboxed, a bot module runs in a sandbox
    only. Sandboxed and played here, what this machine cannot enforce is a note
    (--require-limits: an error)."""
    from kdtourney import store
    from kdtourney.commands.setup import check_limits, check_sandbox
    from kdtourney.match import settings as play

    asked = asked_settings(ctx, opts)
    stored = None
    if folder is not None and store.exists(folder):
        stored = play.stored_settings(store.load_config(folder),
                                      played=not store.load_games(folder, ("game",)).empty)
    settings = play.settle(stored, asked, folder)
    for option, what in (("bot_memory", "limits"), ("bot_cpus", "limits"),
                         ("sandbox_allow", "is for"), ("require_limits", "is about")):
        if opts[option] and not settings.sandbox:
            raise UserError(f"--{option.replace('_', '-')} {what} sandboxed bots: add --sandbox")
    if settings.sandbox and opts["scheduler"] is None:  # a cluster's workers are checked there
        check_sandbox()
        line = check_limits(opts["require_limits"])
        if line and not opts["quiet"]:
            click.echo(f"note: {shown(line)}")
    return settings


def setup_options(opts, settings) -> dict:
    """How and where the command's games are played: kdtourney.commands.setup.Options' fields."""
    given_timeout = {k: opts[k] for k in ("startup_timeout",) if opts[k] is not None}
    return dict(given_timeout, workers=opts.get("workers"), scheduler=opts.get("scheduler"),
                hang_timeout=opts.get("hang_timeout"), play=settings,
                require_limits=opts["require_limits"])


def table_options(opts) -> dict:
    """The options that shape every game of a run, test, ladder or tune: rules, dynasty, clocks."""
    from kdtourney.tournament.definition import RULE_OPTIONS

    names = (*RULE_OPTIONS, "dynasty", "move_time_limit", "time_control", "first_move_time")
    return {k: opts[k] for k in names}


def workers_ahead(opts):
    """Start the workers' fork server (not on a cluster) before anything else, so its imports run
    beside the command's own and its reading of the bots: a local command's first game starts
    sooner. A command refused for its input ends it unused."""
    if not opts["scheduler"]:
        fork_server.start()


def open_session(ctx, opts, *, params, plays, what, load, prepare, prefix=""):
    """Where a run, test or tune plays and with what: (folder, loaded, registry, play settings,
    meta). With --resume DIR, `load(DIR)` gives (loaded, its table, the stored meta) and the
    options `params` are refused (`plays` says why); else `prepare(registry, seed)` gives
    (loaded, table) for the asked folder, or a new one named after the table."""
    from kdtourney.commands.folders import asked_folder, new_folder, session_meta, stored_seed

    refuse_workers_with_scheduler(opts)
    if opts["resume"]:
        refuse_on_resume(ctx, params, plays)
        folder = Path(opts["resume"])
        loaded, table, stored_meta = load(folder)
        settings = play_settings(ctx, opts, folder)
        found = resumed_registry(opts["bots_dirs"], stored_meta, table, what,
                                 settings.sandbox_for(folder), opts["startup_timeout"])
        name = stored_meta.get("name", folder.name)
    else:
        folder = asked_folder(opts["out"], opts["name"])
        settings = play_settings(ctx, opts, folder)
        found = registry(opts["bots_dirs"], settings.sandbox_for(folder), opts["startup_timeout"])
        seed = opts["seed"] if opts["seed"] is not None else stored_seed(folder)
        loaded, table = prepare(found, seed)
        if folder is None:
            folder = new_folder(table, prefix=prefix)
        name = opts["name"] or folder.name
    meta = session_meta(name, registry_dirs=opts["bots_dirs"] or [])
    return folder, loaded, found, settings, meta


def write_report(folder, no_report):
    """The report page (or `folder` with --no-report, or when the report fails: a warning)."""
    if no_report:
        return folder
    try:
        from kdtourney.report.html import write_report as write
        return write(folder)
    except Exception as exc:  # the games are stored; the report can be made again later
        click.echo(f"warning: no report ({type(exc).__name__}: {exc}); the games are stored, "
                   f"make it with: kdtourney report {folder}", err=True)
        return folder


__all__ = ["registry", "refuse_workers_with_scheduler", "refuse_on_resume", "resumed_registry",
           "play_settings", "setup_options", "table_options", "workers_ahead", "open_session",
           "write_report"]
