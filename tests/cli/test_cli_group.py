"""The command group itself (kdtourney.cli.group): the user's errors become one line in one place,
anything else while a command plays is a bug with its trace logged, and `kdtourney --help` starts
without the engine."""

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from kdtourney.cli.group import Commands, harness_errors
from kdtourney.errors import UserError


def group_playing_into(folder, error):
    """A group of one command that raises `error` while it plays into `folder`."""
    @click.group(cls=Commands)
    def group():
        pass

    @group.command("go")
    def go():
        with harness_errors(folder):
            raise error

    return group


def test_a_user_error_is_one_line_and_exit_2(tmp_path):
    result = CliRunner().invoke(group_playing_into(tmp_path, UserError("no such \x1b bot")),
                                ["go"])
    assert result.exit_code == 2
    assert result.output == "Error: no such \\x1b bot\n"
    assert not (tmp_path / "logs").exists()


def test_any_other_error_while_playing_is_a_bug_logged_with_exit_70(tmp_path):
    result = CliRunner().invoke(group_playing_into(tmp_path, ValueError("what\nwent wrong")),
                                ["go"])
    log = tmp_path / "logs" / "harness.log"
    assert result.exit_code == 70
    assert result.output == ("Error: kdtourney failed: ValueError: went wrong (full trace in "
                             f"{log})\n")
    assert "raise error" in log.read_text() and "ValueError: what" in log.read_text()


@pytest.mark.process
def test_the_command_line_starts_without_the_engine():
    code = ("import sys, kdtourney.cli; "
            "assert not {'numba', 'pandas', 'numpy'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)
