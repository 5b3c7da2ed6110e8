"""Bots in their own process, the harness's side of KDTP/1 (docs/protocol.md, docs/sandbox.md):
declaration (`Program`, a TOML bot's `load_toml`, `serve_program`), identity (a TOML bot's code
identity, its snapshot), files and digests (which files are a bot's, read and hashed as a
submission, within bounds), launch (starting and killing a process group), process
(`BotProcess`, its failures), output (its stderr, log and output limit), pool (`ProcessPool`,
`check_programs`), bot (`ExternalBot`, the Bot adapter), kdtp (the wire format), listing (bot
modules asked what they define, each in a sandbox; the bot side of KDTP, `kdtourney serve`, is
kdtourney.registry.serve), sandbox (bubblewrap's command line and the limits), cgroups (a
sandboxed bot's cgroup), syscalls (its system call filter) and private (the harness's private
temporary folder).
"""

from kdtourney.external.bot import ExternalBot
from kdtourney.external.declaration import Declared, Program, load_toml, serve_program
from kdtourney.external.identity import program_files, program_identity
from kdtourney.external.launch import die_with_parent, kill_group, start_process
from kdtourney.external.output import LOG_BYTES
from kdtourney.external.pool import ProcessPool, check_programs, log_name
from kdtourney.external.process import (
    DEFAULT_MOVE_TIME_MARGIN,
    DEFAULT_STARTUP_TIMEOUT,
    QUIT_GRACE,
    BotExited,
    BotFailure,
    BotOutOfMemory,
    BotOutputFlood,
    BotProcess,
    BotProtocolError,
    BotTimeout,
    IllegalAnswer,
    ProcessSettings,
    StartupError,
)
from kdtourney.external.sandbox import Limits, Sandbox, SandboxError

__all__ = ["Program", "Declared", "ProcessSettings", "ProcessPool", "ExternalBot", "BotProcess",
           "BotFailure", "BotTimeout", "BotExited", "BotProtocolError", "IllegalAnswer",
           "BotOutOfMemory", "BotOutputFlood", "Sandbox", "Limits", "SandboxError",
           "StartupError", "load_toml", "serve_program", "check_programs", "kill_group",
           "die_with_parent", "start_process", "program_files", "program_identity", "log_name",
           "DEFAULT_MOVE_TIME_MARGIN", "DEFAULT_STARTUP_TIMEOUT", "QUIT_GRACE", "LOG_BYTES"]
