"""The `kdtourney` command line: each command parses its options, calls the library and prints.

    group      the group `main`, the one place the user's errors become one line (exit 2) and
               `harness_errors` (a bug while playing: DIR/logs/harness.log, exit 70); `script`
    options    the options and parameter types several commands share
    session    from a playing command's options to its folder, registry and play settings
    run        run, play          evaluate   sprt, tune          ladder   ladder
    folders    replay, export, report, ratings                   bots     bots, serve, new-bot

The console script is `kdtourney.cli:script`; `python -m kdtourney` runs it too.
"""

from kdtourney.cli import bots, evaluate, folders, ladder, run
from kdtourney.cli.group import main, script

for module in (bots, run, evaluate, ladder, folders):
    for command in module.COMMANDS:
        main.add_command(command)

__all__ = ["main", "script"]
