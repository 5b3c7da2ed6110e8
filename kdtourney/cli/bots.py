"""The bot commands: `bots` (what can play), `serve` (a bot as a KDTP program), `new-bot` (a bot
to start from), and the hidden `list-bots` (the listing step of --sandbox)."""
# The library is imported inside the commands: `kdtourney --help` imports no numba or pandas.

import sys

import click

from kdtourney.cli.options import bots_dir_option, sandbox_allow_option
from kdtourney.cli.session import registry
from kdtourney.errors import UserError


def read_sources(path) -> dict:
    """The bot files as the harness ships them (registry.encode_sources), from the file `path`
    the command was given; an unreadable or bad file is the user's error."""
    from kdtourney.registry import decode_sources

    try:
        with open(path, encoding="utf-8") as f:
            return decode_sources(f.read())
    except (OSError, ValueError) as exc:  # a file that cannot be read, or is not sources
        raise UserError(str(exc)) from None


@click.command("bots")
@bots_dir_option
@click.option("--sandbox", is_flag=True, help="List the bots as a --sandbox run finds them: "
              "modules asked in a sandbox what they define, and bots that name files outside "
              "their folder refused.")
@sandbox_allow_option
def bots_command(bots_dirs, sandbox, sandbox_allow):
    """List the available bots, their parameters (and commands), and the bot files that failed to
    load."""
    from kdtourney.match.settings import PlaySettings
    from kdtourney.registry import listing

    if sandbox_allow and not sandbox:
        raise UserError("--sandbox-allow is for sandboxed bots: add --sandbox")
    play = PlaySettings(sandbox=True, sandbox_allow=sandbox_allow) if sandbox else None
    click.echo(listing(registry(bots_dirs, play.sandbox_for(None) if play else None)))


@click.command("serve")
@click.argument("spec", metavar="BOT[:key=value...]")
@bots_dir_option
@click.option("--sources", type=click.Path(dir_okay=False), hidden=True,
              help="The bot files as the harness ships them (registry.encode_sources), instead "
              "of the bot folders: how `run --isolate` starts a bot.")
def serve_command(spec, bots_dirs, sources):
    """Play BOT as a KDTP bot on stdin/stdout: the bot side of the protocol kdtourney speaks with
    bots in their own process (docs/protocol.md), for other harnesses and for tests.

    Each game makes a new instance with the parameters of BOT, the game's options over them.
    """
    from kdtourney.registry import BotRegistry
    from kdtourney.registry.serve import reserve_stdout, serve

    protocol = reserve_stdout()  # before any bot code runs: its prints go to stderr
    found = BotRegistry.from_sources(read_sources(sources)) if sources else registry(bots_dirs)
    found.resolve(spec)
    sys.exit(serve(found, spec, stdout=protocol))


@click.command("new-bot")
@click.argument("name")
@click.option("--bots-dir", default="bots", show_default=True, metavar="DIR",
              type=click.Path(file_okay=False),
              help="The bots folder to write the bot's folder in.")
@click.option("--kdtp", is_flag=True, help="A program in its own process, speaking KDTP/1 on "
              "stdin/stdout (a TOML file and a Python script), instead of a Python class.")
def new_bot_command(name, bots_dir, kdtp):
    """Write a minimal bot NAME into a folder of its own, DIR/NAME, ready to play and to change."""
    from kdtourney.commands.new_bot import write_new_bot
    from kdtourney.registry import BotRegistry

    builtins = BotRegistry((), env=False, cwd=False, entry_points=False).bots
    written = write_new_bot(bots_dir, name, kdtp=kdtp, taken=builtins)
    for path in written:
        click.echo(f"wrote {path}")
    click.echo(f"play it:  kdtourney run --bots-dir {bots_dir} --bots {name},greedy,random "
               "--games 60")
    if kdtp:
        click.echo("check it: python -c \"from kdtourney.testing import check_bot; "
                   f"print(check_bot('{name}', bots_dirs=['{bots_dir}']))\"")
    else:
        click.echo(f"check it: python {written[0]}")


@click.command("list-bots", hidden=True)
@click.option("--sources", type=click.Path(dir_okay=False), required=True,
              help="The bot files as the harness ships them (registry.encode_sources).")
@click.argument("specs", nargs=-1, metavar="[BOT[:key=value...]]...")
def list_bots_command(sources, specs):
    """The listing step of --sandbox: run the bot modules of SOURCES and print, as one JSON line,
    the bots they define and the entrants (each bot with its defaults, and SPECS) they refuse
    (kdtourney.external.listing)."""
    from kdtourney.external import kdtp
    from kdtourney.registry.serve import list_bots, reserve_stdout

    protocol = reserve_stdout()  # before any bot code runs: its prints go to stderr
    files = read_sources(sources)
    protocol.write(kdtp.encode(list_bots(files, specs)))
    protocol.flush()


COMMANDS = (bots_command, serve_command, new_bot_command, list_bots_command)
