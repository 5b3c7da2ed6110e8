"""The `kdtourney` command line: parses, calls the library, prints."""

import click

from kdtourney import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kdtourney")
def main():
    """Tournaments and bot evaluation for Kingdomino."""
