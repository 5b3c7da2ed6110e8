"""The system call filter of a sandboxed bot (bwrap's `--seccomp FD`), compiled by libseccomp
(through pyseccomp, its ctypes binding) for this machine's architecture.

The namespaces (kdtourney.external.sandbox) keep processes, files, the network and System V
and POSIX IPC apart; what the kernel keeps beside them it keeps per user or per machine, and a
bot could leave a message there for another sandbox, or for itself in a later process, or attack
the kernel through it. Refused (everything else is allowed):
- the keyrings (`add_key`, `keyctl`, `request_key`): a key outlives its process, in a keyring of
  its user or of the harness's session, until the machine restarts;
- a user namespace of its own (`clone`, `unshare` with CLONE_NEWUSER; `clone3`, whose flags a
  filter cannot read, answers ENOSYS, so the C library falls back to `clone`);
- sockets of families other than unix, IPv4, IPv6 and netlink: a `vsock` reaches the host and
  every other process of a virtual machine whatever its network namespace;
- io_uring, bpf, perf events, userfaultfd, fanotify and the kernel log (`syslog`): kernel state
  or the host's events, and most of the kernel's attack surface, which no bot needs.
A system call of another architecture (a 32-bit program on a 64-bit machine) kills the process:
the filter only knows this machine's numbering.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import tempfile

from kdtourney.external import private

CLONE_NEWUSER = 0x10000000
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
FAMILIES = 64                # socket families the rules name one by one; all above are refused
REFUSED = {"add_key": errno.EPERM, "keyctl": errno.EPERM, "request_key": errno.EPERM,
           "io_uring_setup": errno.ENOSYS, "io_uring_enter": errno.ENOSYS,
           "io_uring_register": errno.ENOSYS, "bpf": errno.EPERM,
           "perf_event_open": errno.EPERM, "userfaultfd": errno.EPERM,
           "fanotify_init": errno.EPERM, "syslog": errno.EPERM, "clone3": errno.ENOSYS}
INSTALL_HINT = "pip install pyseccomp, with libseccomp from the system (apt-get install libseccomp2)"


def program() -> bytes:
    """The filter as a BPF program (what bwrap's --seccomp reads); ImportError or OSError when
    libseccomp or its binding is missing."""
    try:
        import pyseccomp as seccomp
    except RuntimeError as exc:  # pyseccomp's word for a missing libseccomp
        raise ImportError(str(exc)) from None
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    rules.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    for call, error in REFUSED.items():
        rules.add_rule(seccomp.ERRNO(error), call)
    for call in ("clone", "unshare"):
        rules.add_rule(seccomp.ERRNO(errno.EPERM), call,
                       seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER))
    refused = seccomp.ERRNO(errno.EAFNOSUPPORT)
    for family in sorted(set(range(FAMILIES)) - {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK}):
        rules.add_rule(refused, "socket", seccomp.Arg(0, seccomp.EQ, family))
    rules.add_rule(refused, "socket", seccomp.Arg(0, seccomp.GE, FAMILIES))
    with tempfile.TemporaryFile() as out:
        rules.export_bpf(out)
        out.seek(0)
        return out.read()


@functools.lru_cache(maxsize=1)
def program_file() -> str:
    """The path of the compiled filter, in the harness's private folder (written once per
    process; named by its content)."""
    code = program()
    path = os.path.join(private.folder(), f"seccomp-{hashlib.sha256(code).hexdigest()[:16]}.bpf")
    if not os.path.exists(path):
        partial = f"{path}.{os.getpid()}"
        fd = private.open_file(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with os.fdopen(fd, "wb") as f:
            f.write(code)
        os.replace(partial, path)
    return path


__all__ = ["program", "program_file", "REFUSED", "INSTALL_HINT"]
