"""The errors kdtourney raises on purpose, under one base.

    KdtourneyError      every one of them
      UserError         what the user asked for or gave cannot be done: the command line prints
                        its message as one line and exits with status 2, nothing stored is lost
      HarnessError      a bug of kdtourney's own, met where it rose (a worker's trace): the
                        command line logs it to DIR/logs/harness.log and exits with status 70
      BotFailure        a bot broke its contract (kdtourney.external): its game is forfeited

Anything else that reaches the command line is a bug too (exit 70). A UserError is also a
ValueError, so that code catching a bad value keeps catching it.
"""


class KdtourneyError(Exception):
    """The base of every error kdtourney raises on purpose."""


class UserError(KdtourneyError, ValueError):
    """What the user asked for or gave cannot be done; the message is one line saying why."""


class HarnessError(KdtourneyError):
    """A bug of kdtourney's own, raised with the trace of where it rose (a worker's)."""


class BotFailure(KdtourneyError):
    """A bot process broke its contract: it timed out, exited, or answered out of protocol."""


__all__ = ["KdtourneyError", "UserError", "HarnessError", "BotFailure"]
