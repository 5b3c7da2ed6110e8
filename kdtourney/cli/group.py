"""The `kdtourney` command group, its errors, and `script` (the console script).

    main                 the click group every command joins (kdtourney.cli adds them)
    script               `kdtourney` and `python -m kdtourney`
    harness_errors(DIR)  around a command's play: a bug's trace to DIR/logs/harness.log, exit 70

A user's error (kdtourney.errors.UserError, and click's usage errors) anywhere in a command is
one line, `Error: <message>`, exit status 2; Ctrl-C outside play is exit status 130.
"""

import atexit
import contextlib
import gc
import os
import sys

import click

from kdtourney import __version__, interrupts
from kdtourney.errors import HarnessError, UserError
from kdtourney.text import shown


def is_user_error(exc: BaseException) -> bool:
    """Whether `exc` is the user's: bad input, told in one line."""
    return isinstance(exc, UserError)


def is_harness_error(exc: BaseException) -> bool:
    """Whether `exc` is a bug of kdtourney's met where it rose (a worker's), told as it is."""
    return isinstance(exc, HarnessError)


class OneLineError(click.ClickException):
    """`Error: <message>` on one line (what a bot wrote in it, its control characters escaped),
    no traceback, exit status 2."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(shown(message))


class HarnessFailure(click.ClickException):
    """A bug of kdtourney's while it played: one `Error:` line naming the log of its trace, exit
    status 70 (EX_SOFTWARE), not 2 (bad input)."""

    exit_code = os.EX_SOFTWARE


@contextlib.contextmanager
def one_line_errors():
    """The user's errors as one `Error:` line: a UserError, and click's usage errors (an unknown
    option, a missing argument; click would add the usage and a hint). A bare command still
    shows its help."""
    try:
        yield
    except click.exceptions.NoArgsIsHelpError:
        raise
    except click.UsageError as exc:
        raise OneLineError(exc.format_message()) from None
    except Exception as exc:
        if not is_user_error(exc):
            raise
        raise OneLineError(str(exc)) from None


@contextlib.contextmanager
def harness_errors(folder):
    """Around a command's play into `folder`: an exception other than the user's and click's is a
    bug of kdtourney's (in a worker: HarnessError): its full trace goes to FOLDER/logs/harness.log
    and the user gets one line naming it, exit status 70. The games stored before it stay stored
    (each is committed as it ends)."""
    from kdtourney.commands.folders import record_harness_error  # start-up time: numba

    try:
        yield
    except (click.ClickException, click.exceptions.Exit, click.exceptions.Abort):
        raise
    except Exception as exc:
        if is_user_error(exc):
            raise
        log = record_harness_error(folder, exc)
        text = str(exc).strip()
        what = text if is_harness_error(exc) else f"kdtourney failed: {type(exc).__name__}" \
            + (f": {text.splitlines()[-1]}" if text else "")
        raise HarnessFailure(f"{what} (full trace in {log})") from None


class Commands(click.Group):
    """The group: the user's errors in one line wherever they rise; Ctrl-C that the command did
    not handle (it was not playing): exit status 130; an untested Numba: one line."""

    def make_context(self, *args, **kwargs):
        with one_line_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        try:
            with one_line_errors(), interrupts.caught():
                return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except ImportError as exc:  # an untested Numba, refused as the engine is imported
            check = sys.modules.get("kdtourney.engine.numba_version")
            if not isinstance(exc, getattr(check, "NumbaVersionError", ())):
                raise
            raise OneLineError(str(exc)) from None


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kdtourney")
def main():
    """Tournaments and bot evaluation for Kingdomino."""


def script(prog_name: str | None = None):
    """The `kdtourney` command and `python -m kdtourney` (a served bot's process): `main`, with
    the garbage collector's passes at the interpreter's exit left out (everything is frozen at
    exit: docs/commands.md says why). Finalizers and exit handlers run as before."""
    atexit.register(gc.freeze)
    main(prog_name=prog_name)


__all__ = ["main", "script", "harness_errors", "is_user_error", "OneLineError",
           "HarnessFailure"]
