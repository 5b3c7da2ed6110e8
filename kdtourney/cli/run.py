"""The tournament commands: `run` (a tournament of bots) and `play` (you against bots)."""
# The library is imported inside the commands: `kdtourney --help` imports no numba or pandas.

import shlex

import click

from kdtourney.cli.group import harness_errors
from kdtourney.cli.options import (
    MAX_GAMES,
    RULE_PARAMS,
    STORED_PARAMS,
    Number,
    bots_dir_option,
    rule_options,
    sandbox_allow_option,
    session_options,
)
from kdtourney.cli.session import (
    open_session,
    play_settings,
    registry,
    setup_options,
    table_options,
    workers_ahead,
    write_report,
)
from kdtourney.errors import UserError

TOURNAMENT_PARAMS = ("bots", "games", "players", *RULE_PARAMS, "gauntlet", "lineup",
                     *STORED_PARAMS)


@click.command("run")
@click.option("--bots", metavar="SPECS", help="Entrants, comma-separated; parameters with ':', "
              "e.g. greedy,mcts:iterations=500.")
@click.option("--games", type=Number(int, maximum=MAX_GAMES), default=100, show_default=True,
              help="Games in all, rounded up to whole blocks.")
@click.option("--players", metavar="N[,N]", help="Table size 2, 3 or 4, or a list such as 2,4 "
              "(blocks alternate). Default 2; a lineup's length.")
@rule_options
@click.option("--gauntlet", metavar="CANDIDATE", help="The candidate against every --bots entrant.")
@click.option("--lineup", metavar="SPECS", help="A fixed table, e.g. greedy,random,random,random.")
@session_options(
    "Tournament", seed="Tournament seed", name_default="the bots",
    resume="Finish the tournament stored in DIR.", last_line="final line")
@click.pass_context
def run_command(ctx, **opts):
    """Play a tournament: every game stored in DIR/tournament.sqlite as soon as it is finished,
    then the report DIR/index.html.

    Formats: round robin over --bots (default), --gauntlet CANDIDATE, or --lineup. Each deal is
    played under every rotation of the table (a block). Re-running the same command on the same
    --out, or --resume DIR, plays exactly the missing games.
    """
    workers_ahead(opts)
    from kdtourney import store
    from kdtourney.commands.run import load_tournament, run_tournament
    from kdtourney.terminal.progress import Reporter
    from kdtourney.terminal.tables import print_table, standings_table
    from kdtourney.tournament import definition as tour

    def load(folder):
        tournament, stored_meta = load_tournament(folder)
        return tournament, tournament, stored_meta

    def prepare(found, seed):
        tournament = tour.prepare(
            found, bots=opts["bots"], players=opts["players"], games=opts["games"],
            seed=seed, gauntlet=opts["gauntlet"], lineup=opts["lineup"], **table_options(opts))
        return tournament, tournament

    folder, tournament, found, settings, meta = open_session(
        ctx, opts, params=TOURNAMENT_PARAMS, plays="plays the stored tournament",
        what="tournament", load=load, prepare=prepare)
    with harness_errors(folder):
        outcome = run_tournament(tournament, folder, found, meta=meta,
                                 reporter=Reporter(quiet=opts["quiet"]),
                                 **setup_options(opts, settings))
    stored = outcome.stored_before + outcome.played
    if outcome.interrupted:
        click.echo(f"interrupted: {stored} of {outcome.total} games stored in {folder}; "
                   f"finish with: kdtourney run --resume {shlex.quote(str(folder))}", err=True)
        ctx.exit(130)
    if not opts["quiet"] and (table := standings_table(folder)) is not None:
        print_table(table)
    shown = write_report(folder, opts["no_report"])
    faults = store.load_faults(folder)
    forfeits = int((faults["kind"] != "failed").sum())
    failed = faults.loc[faults["kind"] == "failed", "game"].nunique()
    click.echo(f"{shown}: {stored} games" + (f", {forfeits} faults" if forfeits else "")
               + (f", {failed} failed" if failed else "")
               + (f" ({outcome.played} played now)" if outcome.stored_before else ""))


@click.command("play")
@click.option("--against", "against", multiple=True, required=True, metavar="BOT",
              help="A bot to play against, as --bots takes it (built-in, a --bots-dir bot, a "
              "KDTP program's TOML); repeat for a table of three or four.")
@click.option("--games", type=Number(int, maximum=1000), default=1, show_default=True,
              help="Games to play, one after the other, your seat rotating as in a run's block "
              "(the same command again plays the next ones).")
@rule_options
@click.option("--seed", type=Number(int, positive=False), help="Seed (default: fresh; on an "
              "existing --out, the stored one).")
@click.option("--out", metavar="DIR", help="The games' folder (default "
              "reports/play-<bots>-<time>); the same command on it plays the games it lacks.")
@click.option("--name", help="The folder's name (default: the bots and a time stamp).")
@bots_dir_option
@click.option("--move-time-limit", type=Number(float), metavar="SECONDS",
              help="Every seat's limit per decision, yours too.")
@click.option("--time-control", metavar="BANK+INC",
              help="Every seat's clock, yours too, e.g. 300+5.")
@click.option("--first-move-time", type=Number(float), metavar="SECONDS",
              help="The limit of each seat's first decision instead.")
@click.option("--move-time-margin", type=Number(float, positive=False), metavar="SECONDS",
              help="Every seat's margin per game beyond its clock (default 0.2).")
@click.option("--sandbox", is_flag=True, help="Every bot in a bubblewrap sandbox, as in a run.")
@click.option("--bot-memory", type=Number(int), metavar="MIB",
              help="With --sandbox: a bot's memory limit (default 1024).")
@sandbox_allow_option
@click.option("--bot-cpus", type=Number(float, maximum=1024), metavar="N",
              help="With --sandbox: a bot's CPU quota while it decides (default 1).")
@click.option("--require-limits", is_flag=True, help="With --sandbox: stop where this machine "
              "cannot enforce every limit.")
@click.option("--startup-timeout", type=Number(float), metavar="SECONDS",
              help="Seconds a bot has to start and answer hello (default 20).")
@click.option("--port", type=Number(int, positive=False, maximum=65535), default=0,
              help="The page's port on 127.0.0.1 (default: a free one).")
@click.option("--no-browser", is_flag=True, help="Print the page's address without opening it.")
@click.pass_context
def play_command(ctx, **opts):
    """Play Kingdomino in your browser against bots: a page served on this machine only shows the
    game and your legal placements; the bots play as in a tournament (each in its own process,
    on the clock, forfeiting on a fault; --sandbox: sandboxed), the engine checks your every
    move, and each finished game is stored in DIR like a run's (report, replay and export read
    it)."""
    from kdtourney.commands import play as human
    from kdtourney.commands.folders import asked_folder, new_folder, session_meta, stored_seed

    opts.update(scheduler=None, isolate=False, quiet=False)  # run's options play_settings reads
    folder = asked_folder(opts["out"], opts["name"])
    settings = play_settings(ctx, opts, folder)
    found = registry(opts["bots_dirs"], settings.sandbox_for(folder), opts["startup_timeout"])
    seed = opts["seed"] if opts["seed"] is not None else stored_seed(folder)
    table = human.lineup(found, list(opts["against"]), games=opts["games"], seed=seed,
                         **table_options(opts))
    folder = folder or new_folder(table, prefix="play-")
    meta = session_meta(opts["name"] or folder.name, registry_dirs=opts["bots_dirs"])
    stored = serve_and_play(ctx, opts, table, folder, found, settings, meta)
    click.echo(f"{folder}: {stored} game{'' if stored == 1 else 's'} played")


def serve_and_play(ctx, opts, table, folder, found, settings, meta) -> int:
    """Serve the play page and play `table`'s games on it; how many were stored."""
    import webbrowser

    from kdtourney.commands import play as human
    from kdtourney.commands.play_page import Server
    from kdtourney.report.advice import resume_advice

    board = human.Board()
    try:
        server = Server(board, f"{table.describe()}: {folder.name}", opts["port"])
    except OSError as exc:  # a port that cannot be served
        raise UserError(f"cannot serve the page on 127.0.0.1:{opts['port']}: "
                        f"{exc.strerror or exc}") from None
    server.start()
    click.echo(f"play at {server.url} (the games are stored in {folder}; Ctrl-C stops)")
    if not opts["no_browser"]:
        webbrowser.open(server.url)
    try:
        stored = human.play_games(table, folder, found, board, play=settings, meta=meta,
                                  startup_timeout=opts["startup_timeout"],
                                  require_limits=opts["require_limits"])
        if stored:
            shown = write_report(folder, False)
            board.finish(f"{stored} game{'s' if stored > 1 else ''} stored in {folder}. "
                         f"{again_text(table, folder, shown, meta)} You can close this tab.")
        else:
            board.finish(f"{folder} holds every game of its plan: nothing left to play.")
        board.wait_shown(10.0)
    except (KeyboardInterrupt, human.PersonLeft):
        click.echo(f"interrupted: the game being played is not stored; those that ended "
                   f"are in {folder}; play on with: "
                   f"{resume_advice(folder, {'meta': meta})}", err=True)
        ctx.exit(130)
    finally:
        server.stop()
    return stored


def again_text(table, folder, shown, meta) -> str:
    """What the play page says last: how to replay the games just played, and to play again (the
    folder's next games, or a new folder once its plan is played)."""
    from kdtourney import store
    from kdtourney.report.advice import command_words, resume_advice, without

    games = store.load_games(folder)["game"]
    last = int(games.max())
    words = command_words(meta)
    if len(games) < len(table.plan().games):
        again = resume_advice(folder, {"meta": meta})
    elif words:
        again = f"{shlex.join(without(words))} (a new folder: this one has played its plan)"
    else:
        again = "kdtourney play --against BOT"
    return (f"Replay the last game: kdtourney replay {shlex.quote(str(folder))} {last} (or open "
            f"its report, {shown}). Play again: {again}.")


COMMANDS = (run_command, play_command)
