"""The tables a command prints at its end (rich), and the ladder's list as its live view shows it.

    standings_table(folder)      a tournament's standings, None before any result
    rating_list_table(found)     `kdtourney ratings`' list (kdtourney.report.pool.RatingList)
    ladder_table(rows, ...)      a ladder's list (kdtourney.report.ladder.Board.rows)
    print_table(table)           to the terminal, or 160 columns wide to a file or pipe
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from kdtourney.report.fmt import elo_text
from kdtourney.report.standings import standings
from kdtourney.stats.outcomes import balanced_blocks
from kdtourney.store import failed_games, load_results

#: The entrant column's least width: at 80 columns the figures' columns leave it this much.
ENTRANT_WIDTH = 12


def print_table(table: Table) -> None:
    """Print `table` to the standard output; not a terminal, 160 columns wide."""
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    console.print(table)


def standings_table(folder) -> Table | None:
    """The standings of the tournament in `folder` as a rich Table, None before any result."""
    results = balanced_blocks(load_results(folder))  # as standings() counts them
    if results.empty:
        return None
    failed = failed_games(folder)
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
        share = f"{row['win_share']:.3f} [{row['win_share_lo']:.2f}, {row['win_share_hi']:.2f}]"
        table.add_row(str(entrant), str(int(row["games"])), share, f"{row['score']:.1f}",
                      f"{row['margin']:+.1f}", rating,
                      *[str(int(row["faults"]))] * with_faults,
                      *[str(int(failed.get(entrant, 0)))] * with_failed)
    return table


def rating_list_table(found) -> Table:
    """The rating list: rank, entrant, Elo with interval, games, folders, code (and failed games,
    when there are any; the group, when the entrants fall in groups no game connects)."""
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
    return table


def ladder_table(rows, title: str | None = None, unranked: str = "-") -> Table:
    """A ladder's list: rank (`unranked` for an entrant without one), entrant, Elo with interval,
    games, version, status."""
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("#", "entrant", "Elo", "games", "version", "status"):
        table.add_column(column, justify="left" if column in ("entrant", "status") else "right",
                         no_wrap=column != "entrant", overflow="fold")
    for r in rows:
        table.add_row(str(r["rank"] or unranked), r["name"], r["elo_text"], str(r["games"]),
                      str(r["version"]), r["status"])
    return table


__all__ = ["standings_table", "rating_list_table", "ladder_table", "print_table",
           "ENTRANT_WIDTH"]
