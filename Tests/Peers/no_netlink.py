#!/usr/bin/env python3
"""Runs a command where AF_NETLINK sockets are refused, as in a sandbox without netlink.

    python3 no_netlink.py COMMAND [ARGUMENTS...]

Installs a seccomp filter (no_new_privs, then SECCOMP_MODE_FILTER) that makes socket(2)
with domain AF_NETLINK fail with EACCES and allows every other system call, then execs
COMMAND, which inherits the filter. x86_64 only; standard library only (ctypes).
"""

import ctypes
import os
import struct
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EACCES = 13
AUDIT_ARCH_X86_64 = 0xC000003E
NR_SOCKET = 41
AF_NETLINK = 16

# struct seccomp_data: nr (0), arch (4), instruction_pointer (8), args[6] (16...).
BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_RET_K = 0x06


def instruction(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


program = b"".join([
    instruction(BPF_LD_W_ABS, 0, 0, 4),                # arch
    instruction(BPF_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
    instruction(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),   # another ABI: not ours to judge
    instruction(BPF_LD_W_ABS, 0, 0, 0),                # nr
    instruction(BPF_JEQ_K, 0, 3, NR_SOCKET),
    instruction(BPF_LD_W_ABS, 0, 0, 16),               # args[0], low word: the domain
    instruction(BPF_JEQ_K, 0, 1, AF_NETLINK),
    instruction(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EACCES),
    instruction(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
])


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 64
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_char_p))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
    os.execv(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
