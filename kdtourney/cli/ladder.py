"""`kdtourney ladder`: a standing rating list of the bots in folders, for as long as it runs."""
# The library is imported inside the command: `kdtourney --help` imports no numba or pandas.

import shlex
from pathlib import Path

import click

from kdtourney.cli.group import harness_errors
from kdtourney.cli.options import (
    MAX_GAMES,
    RULE_PARAMS,
    STORED_PARAMS,
    Number,
    duration,
    rule_options,
    session_options,
)
from kdtourney.cli.session import (
    play_settings,
    refuse_on_resume,
    refuse_workers_with_scheduler,
    registry,
    setup_options,
    table_options,
    workers_ahead,
)

LADDER_PARAMS = ("players", *RULE_PARAMS, *STORED_PARAMS)


def ladder_session(ctx, opts):
    """(folder, config, bot folders, references, play settings, meta) of the ladder the options
    ask for: a new one, or the one in --resume DIR (its folders, references and rules)."""
    from kdtourney import store
    from kdtourney.commands import ladder
    from kdtourney.commands.folders import asked_folder, session_meta, stored_bots_dirs
    from kdtourney.tournament.definition import split_list

    refuse_workers_with_scheduler(opts)
    if opts["resume"]:
        refuse_on_resume(ctx, LADDER_PARAMS, "continues the stored ladder")
        folder = Path(opts["resume"])
        config = ladder.resumed_config(folder)
        stored_meta = store.load_config(folder).get("meta", {})
        settings = play_settings(ctx, opts, folder)
        bots_dirs = opts["bots_dirs"] or stored_bots_dirs(stored_meta)
        references = split_list(opts["bots"]) or stored_meta.get("ladder_bots", [])
        name = stored_meta.get("name", folder.name)
    else:
        folder = asked_folder(opts["out"], opts["name"]) or Path("ladder")
        settings = play_settings(ctx, opts, folder)
        stored = ladder.stored_config(folder)
        seed = opts["seed"] if opts["seed"] is not None else (stored.seed if stored else None)
        config = ladder.prepare_ladder(players=opts["players"], seed=seed, **table_options(opts))
        bots_dirs, references = opts["bots_dirs"], split_list(opts["bots"])
        name = opts["name"] or folder.name
    ladder.check_field(bots_dirs, references, lambda: registry(
        bots_dirs, settings.sandbox_for(folder), opts["startup_timeout"]))
    meta = dict(session_meta(name, registry_dirs=bots_dirs), ladder_bots=references)
    return folder, config, bots_dirs, references, settings, meta


@click.command("ladder")
@click.option("--bots", metavar="SPECS", help="Fixed reference entrants besides the folders' bots, "
              "e.g. greedy,mcts:time=0.1.")
@click.option("--games", type=Number(int, maximum=MAX_GAMES),
              help="Stop once the ladder holds this many games (default: run until Ctrl-C).")
@click.option("--until", metavar="DURATION", help="Stop after this long, e.g. 90s, 10m, 2h.")
@click.option("--players", metavar="N[,N]", help="Table size 2, 3 or 4, or a list such as 2,4 "
              "(blocks alternate). Default 2.")
@rule_options
@session_options(
    "Ladder", seed="Ladder seed", name_default="ladder",
    resume="Continue the ladder stored in DIR (its folders, references and rules).",
    last_line="final line")
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
    workers_ahead(opts)
    from kdtourney.commands import ladder
    from kdtourney.commands.ladder_pages import LadderPages, final_page
    from kdtourney.terminal.display import LadderDisplay
    from kdtourney.terminal.tables import ladder_table, print_table

    until = duration(opts["until"])
    folder, config, bots_dirs, references, settings, meta = ladder_session(ctx, opts)
    display = LadderDisplay(quiet=opts["quiet"])
    with LadderPages(display, write=not opts["no_report"]) as pages, harness_errors(folder):
        outcome = ladder.play_ladder(
            config, folder, bots_dirs, references, meta=meta, display=display,
            games=opts["games"], until=until, after_chunk=pages.after_chunk,
            **setup_options(opts, settings))
    board = final_page(folder, write=not opts["no_report"])  # from everything stored
    if not opts["quiet"]:
        print_table(ladder_table(board.rows, title="ladder (95% block-bootstrap intervals)"))
    active = sum(r["status"] in ("rated", "provisional", "new") for r in board.rows)
    click.echo(f"{folder / 'index.html' if not opts['no_report'] else folder}: "
               f"{outcome.stored} games, {active} active entrants ({outcome.played} played now)"
               + ("; stopped by Ctrl-C, continue with: kdtourney ladder --resume "
                  + shlex.quote(str(folder)) if outcome.interrupted else ""))
    if outcome.interrupted:
        ctx.exit(130)


COMMANDS = (ladder_command,)
