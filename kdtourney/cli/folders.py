"""The commands that read tournament folders: `replay` (a game), `export` (a table), `report`
(the page) and `ratings` (one rating list over many folders)."""
# The library is imported inside the commands: `kdtourney --help` imports no numba or pandas.

import os
import sys

import click

from kdtourney.cli.options import Number
from kdtourney.errors import UserError


@click.command("replay")
@click.argument("folder", metavar="DIR")
@click.argument("game", type=Number(int, positive=False))
@click.option("--step", is_flag=True, help="Step through the game: the position after each move "
              "(Enter: the next, b: the one before, a number: that move, q: quit).")
@click.option("--html", is_flag=True, help="Write the game's page instead, to watch it move by "
              "move in a browser: DIR/game-GAME.html (--out: another file).")
@click.option("--out", metavar="FILE", help="With --html: the page's file.")
def replay_command(folder, game, step, html, out):
    """Print game GAME of the tournament in DIR move by move, with the final kingdoms; --step
    steps through its positions, --html writes a page that shows it."""
    from kdtourney.terminal.replay import positions, replay_text

    if step and html:
        raise UserError("--step shows the game here, --html writes its page: give one")
    if out is not None and not html:
        raise UserError("--out is the file of --html's page: add --html")
    if html:
        from kdtourney.report.html import write_game_page

        try:
            click.echo(write_game_page(folder, game, out))
        except OSError as exc:  # a file that cannot be written
            raise UserError(f"cannot write the page: {exc}") from None
    elif step:
        step_through(positions(folder, game))
    else:
        click.echo(replay_text(folder, game))


def step_through(frames):
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


@click.command("export")
@click.argument("folder", metavar="DIR")
@click.option("--format", "fmt", metavar="csv|parquet", help="Default: from the file name "
              "(.csv, .parquet or .pq).")
@click.option("-o", "--output", required=True, metavar="FILE")
@click.option("--table", default="results", show_default=True,
              metavar="results|games|faults|entrants|blocks|sessions",
              help="results: one row per player per game, with the game's block and n_players; "
              "entrants: what code played for each entrant (digest, identity); blocks: each "
              "block's table (seats, the entrants' specs, deal seeds); faults: one row per "
              "forfeit, its call as the store counts it (call) and as replays name it "
              "(bot_call); sessions: when the folder was made and resumed, by which command.")
def export_command(folder, fmt, output, table):
    """Write a table of the tournament in DIR to a CSV or Parquet file."""
    from kdtourney.store import export_table

    if fmt is None:
        suffix = os.path.splitext(output)[1].lower()
        fmt = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}.get(suffix)
        if fmt is None:
            raise UserError(f"cannot tell the format of {output}: name it .csv or .parquet, "
                            "or give --format")
    rows = export_table(folder, output, fmt, table)
    click.echo(f"{output}: {rows} rows ({table})")
    if table in EXPORT_NOTES:  # the store's numbering, beside the one the pages show
        click.echo(f"note: {EXPORT_NOTES[table]}", err=True)


def sprt_verdict(folder) -> str:
    """An SPRT folder's verdict line, as `kdtourney sprt` prints it last."""
    from kdtourney import store
    from kdtourney.tournament import sprt

    tournament, test = sprt.stored_test(store.load_config(folder),
                                        store.load_sessions(folder)["games"])
    state = sprt.evaluate(store.load_incoming(folder), tournament, test)
    return sprt.verdict_line(state, test, tournament)


SEATS_FROM_0 = ("its column seat counts from 0, as the store does; the report, replays and the "
                "play page count seats from 1 (seat 0 here is their seat 1)")
#: What `export` says of the numbering of a table beside what the pages show.
EXPORT_NOTES = {"results": SEATS_FROM_0, "notes": SEATS_FROM_0,
                "faults": SEATS_FROM_0 + "; its column call is the store's count of kdtourney's "
                "calls into the bot, from 0: 0 its construction, 1 its setup, k + 1 its act k (a "
                "dynasty's bot is set up again before each deal); bot_call names that call as "
                "the report and replay do ('act 3')",
                "games": "its column error names seats from 1, as the report, replays and the "
                "play page do (the column seat of the tables results, faults and notes counts "
                "from 0: their seat 0 is seat 1 here)"}


@click.command("report")
@click.argument("folder", metavar="DIR")
@click.option("--anchor", metavar="NAME=VALUE", help="Pin one entrant's Elo (default: mean 0), "
              "e.g. --anchor greedy=0.")
@click.option("--open", "open_page", is_flag=True, help="Open the page in the web browser.")
def report_command(folder, anchor, open_page):
    """Rebuild the HTML report DIR/index.html from the tournament stored in DIR, and print its
    standings as `run` does (a run's or a play's folder; an SPRT's verdict, as `sprt` does)."""
    from kdtourney.report.advice import command_kind
    from kdtourney.report.html import write_report
    from kdtourney.store import load_config
    from kdtourney.terminal.tables import print_table, standings_table

    try:
        path = write_report(folder, anchor=anchor)
        # an SPRT's, a tune's or a ladder's page counts other games than all: its page says
        kind = command_kind(load_config(folder))
        table = standings_table(folder) if kind in ("run", "play") else None
        verdict = sprt_verdict(folder) if kind == "sprt" else None
    except OSError as exc:  # a folder that cannot be written
        raise UserError(f"cannot write the report into {folder}: {exc.strerror or exc}") from None
    except (ValueError, TypeError, KeyError) as exc:  # a store's rows changed by hand, or none
        raise UserError(f"cannot build the report of {folder} from its store: {exc}") from None
    if table is not None:
        print_table(table)
    click.echo(str(path))
    if verdict:
        click.echo(verdict)
    if open_page:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())


@click.command("ratings")
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
    from kdtourney import store
    from kdtourney.report import evaluation
    from kdtourney.report.html import parse_anchor
    from kdtourney.report.pool import PoolError, rating_list
    from kdtourney.report.pool_html import write_rating_list
    from kdtourney.terminal.tables import print_table, rating_list_table
    from kdtourney.tournament.definition import parse_players

    counts = parse_players(players) if players is not None else None
    anchor = parse_anchor(anchor)
    if store.exists(out):
        raise UserError(f"{out} holds a tournament, whose report is {out}/index.html: choose "
                        "another --out for the rating list")
    try:
        found = rating_list(folders, players=counts, anchor=anchor)
    except PoolError as exc:  # the lines saying why each folder was left out, then the error
        for line in exc.notes:
            click.echo(line)
        raise
    print_table(rating_list_table(found))
    for line in evaluation.lines(found.evaluation):
        click.echo(line)
    for line in found.notes():
        click.echo(line)
    command = " ".join(["kdtourney"] + sys.argv[1:]) if sys.argv[1:2] == ["ratings"] else None
    try:
        path = write_rating_list(found, out, command)
    except OSError as exc:  # a folder that cannot be written
        raise UserError(f"cannot write the page into {out}: {exc.strerror or exc}") from None
    click.echo(f"{path}: {len(found.rated)} entrants rated from {found.n_games} games in "
               f"{found.n_folders} folders" + (f"; {len(found.skipped)} skipped"
                                                if found.skipped else ""))


COMMANDS = (replay_command, export_command, report_command, ratings_command)
