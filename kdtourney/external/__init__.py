"""Bots in their own process: the harness side of KDTP/1 (the wire format is kdtourney.external.kdtp).

A `Program` is how to start a bot: a command declared in a TOML file of a bots folder, or
`kdtourney serve SPEC` for a Python bot played in isolation. An `ExternalBot` is a `Bot` whose
`setup`, `act` and `finish` talk to such a process; the arena plays it like any other bot.

One module per concern:
- declaration: `Program`, the TOML declaration (`load_toml`), `serve_program`;
- identity: the code identity of a TOML bot (everything it can read when it runs);
- launch: starting a process (its own session, death with its parent), killing its group;
- process: one `BotProcess`, KDTP lines with deadlines, its stderr and log, the failures;
- pool: the `ProcessPool` of a worker process and the start-up check (`check_programs`);
- bot: `ExternalBot`, the `Bot` adapter;
- sandbox: `--sandbox`, bubblewrap's command line and the limits of a sandboxed process;
- listing: asking bot modules what they define, each in a sandbox (the registry's listing step);
- cgroups: the cgroup of a sandboxed process (its limits, freezing it, killing what it started).
"""

from kdtourney.external.bot import ExternalBot
from kdtourney.external.declaration import Declared, Program, load_toml, serve_program
from kdtourney.external.identity import program_files, program_identity
from kdtourney.external.launch import die_with_parent, kill_group, start_process
from kdtourney.external.sandbox import Limits, Sandbox, SandboxError
from kdtourney.external.pool import ProcessPool, check_programs, log_name
from kdtourney.external.process import DEFAULT_MOVE_TIME_MARGIN, DEFAULT_STARTUP_TIMEOUT, LOG_BYTES, QUIT_GRACE, BotExited, BotFailure, BotOutOfMemory, BotOutputFlood, BotProcess, BotProtocolError, BotTimeout, IllegalAnswer, ProcessSettings, StartupError

__all__ = ["Program", "Declared", "ProcessSettings", "ProcessPool", "ExternalBot", "BotProcess",
           "BotFailure", "BotTimeout", "BotExited", "BotProtocolError", "IllegalAnswer",
           "BotOutOfMemory", "BotOutputFlood", "Sandbox", "Limits", "SandboxError",
           "StartupError", "load_toml", "serve_program", "check_programs", "kill_group",
           "die_with_parent", "start_process", "program_files", "program_identity", "log_name",
           "DEFAULT_MOVE_TIME_MARGIN", "DEFAULT_STARTUP_TIMEOUT", "QUIT_GRACE", "LOG_BYTES"]
