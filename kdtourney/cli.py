"""The `kdtourney` command line: parses, calls the library, prints."""

import click

from kdtourney import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kdtourney")
def main():
    """Tournaments and bot evaluation for Kingdomino."""


class _CommandError(click.ClickException):
    """A one-line `Error: ...` and exit status 2 (bad input), no traceback."""

    exit_code = 2


@main.command("bots")
@click.option("--bots-dir", "bots_dirs", multiple=True, type=click.Path(file_okay=False),
              metavar="DIR", help="A folder of bot modules (repeatable); searched before "
              "KDTOURNEY_BOTS_DIR and ./bots/.")
def bots_command(bots_dirs):
    """List the available bots, their parameters, and the bot modules that failed to import."""
    from kdtourney.bots.registry import BotRegistry, BotsDirError, DuplicateBotError, listing

    try:
        registry = BotRegistry(bots_dirs)
    except (BotsDirError, DuplicateBotError) as exc:
        raise _CommandError(str(exc)) from None
    click.echo(listing(registry))
