"""`python -m kdtourney`: the command line (how an isolated bot's `kdtourney serve` is started)."""

from kdtourney.cli import script

script(prog_name="kdtourney")
