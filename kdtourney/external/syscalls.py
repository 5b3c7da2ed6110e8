"""The system call filter of a sandboxed bot (bwrap's `--seccomp FD`), compiled by libseccomp
(through pyseccomp, its ctypes binding) for this machine's architecture: what the kernel keeps
beside the namespaces, per user or per machine, is refused, so that no sandbox leaves a message
for another or attacks the kernel through it (docs/sandbox.md says what and why).

    REFUSED        the calls refused, with the error they get (and: a user namespace of its
                   own, sockets other than unix, IPv4, IPv6 and netlink; a call of another
                   architecture kills the process)
    program        the filter as a BPF program; ImportError or OSError without libseccomp
    program_file   its path, written once in the harness's private folder
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
INSTALL_HINT = ("pip install pyseccomp, with libseccomp from the system (apt-get install "
                "libseccomp2)")


def program() -> bytes:
    """The filter as a BPF program (what bwrap's --seccomp reads); ImportError or OSError when
    libseccomp or its binding is missing."""
    try:
        import pyseccomp as seccomp  # an optional dependency: Linux only, needs libseccomp
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
