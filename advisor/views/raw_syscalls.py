"""Syscalls recorded as `-e raw_syscalls`: one sys_enter and one sys_exit event for every
call of every task, naming the call by its number, not by a per-call event.

`trace-cmd report` prints them as "sys_enter: NR 74 (3, 0, ...)" and "sys_exit: NR 74 = 0":
the fields are `id` (the number), `args` (six unsigned longs: the registers) and `ret`.
The number means a call only on one architecture: 74 is fsync on x86_64 and fsync is 82 on
arm64 (arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/asm-generic/unistd.h). The
architecture comes from the capture's `uname` (trace-cmd records it: "Linux vm 6.18.44
x86_64"); a capture without it (ftrace text) cannot name the calls.
"""

from __future__ import annotations

ENTER, EXIT = "raw_syscalls:sys_enter", "raw_syscalls:sys_exit"
EVENTS = (ENTER, EXIT)
# The row order column: the events' own field `id` (the syscall number) takes the name.
ORDER = "common_id"
ENTER_FIELDS, EXIT_FIELDS = (ORDER, "id", "args"), (ORDER, "id", "ret")

# The calls the views read, by number. x86_64's own table, and the generic one that
# arm64, riscv64 and loongarch64 share.
_X86_64 = {"write": 1, "ioctl": 16, "pwrite64": 18, "writev": 20, "fsync": 74, "fdatasync": 75, "sync": 162,
           "sync_file_range": 277, "pwritev": 296, "syncfs": 306, "pwritev2": 328}
_GENERIC = {"ioctl": 29, "write": 64, "writev": 66, "pwrite64": 68, "pwritev": 70, "sync": 81, "fsync": 82,
            "fdatasync": 83, "sync_file_range": 84, "syncfs": 267, "pwritev2": 287}
NUMBERS = {"x86_64": _X86_64, "aarch64": _GENERIC, "riscv64": _GENERIC, "loongarch64": _GENERIC}
_MACHINE_NAMES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64",
                  "riscv64": "riscv64", "loongarch64": "loongarch64"}

# Each call's arguments in register order, as its own sys_enter_<call> event names them
# (its format file), with their width in bits: `unsigned int fd` is the low 32 bits of
# the register, `size_t count` all 64.
ARGS: dict[str, tuple[tuple[str, int], ...]] = {
    "write": (("fd", 32), ("buf", 64), ("count", 64)),
    "pwrite64": (("fd", 32), ("buf", 64), ("count", 64), ("pos", 64)),
    "writev": (("fd", 64), ("vec", 64), ("vlen", 64)),
    "pwritev": (("fd", 64), ("vec", 64), ("vlen", 64), ("pos_l", 64), ("pos_h", 64)),
    "pwritev2": (("fd", 64), ("vec", 64), ("vlen", 64), ("pos_l", 64), ("pos_h", 64), ("flags", 32)),
    "fsync": (("fd", 32),), "fdatasync": (("fd", 32),), "syncfs": (("fd", 32),), "sync": (),
    "ioctl": (("fd", 32), ("cmd", 32), ("arg", 64)),
    "sync_file_range": (("fd", 32), ("offset", 64), ("nbytes", 64), ("flags", 32)),
}

LACKS = ("named by their numbers on {arch}; a 32-bit program's calls carry its own architecture's numbers "
         "and may be misnamed")


def architecture(uname: str | None) -> str | None:
    """The architecture whose numbers the capture's calls carry, from `uname`."""
    for word in (uname or "").split():
        if word in _MACHINE_NAMES:
            return _MACHINE_NAMES[word]
    return None


def unusable(arch: str | None, uname: str | None) -> str:
    """Why raw_syscalls cannot name the calls here ("" when they can)."""
    if arch is not None:
        return ""
    if uname:
        return (f"raw_syscalls recorded, but the capture's machine ({uname!r}) is not one whose syscall numbers "
                f"are known here ({', '.join(NUMBERS)})")
    return "raw_syscalls recorded, but the capture does not say its machine (uname), so the syscall numbers cannot be named"


def number(arch: str, syscall: str) -> int | None:
    return NUMBERS[arch].get(syscall)


def arg(syscall: str, name: str, paired: bool = False) -> str | None:
    """The expression for argument `name` of `syscall` (a BIGINT, as the call's own
    event has it), or None when the call has no such argument. From the enter event's
    `args` list (DuckDB lists count from 1: args[1] is the first register), or with
    `paired` from `raw.syscall_spans`, where the parser kept register i as arg{i-1} with
    all its bits (an unsigned 64-bit value above 2^63 reads negative there)."""
    for i, (a, bits) in enumerate(ARGS.get(syscall, ()), start=1):
        if a != name:
            continue
        if paired:
            return f"(s.arg{i - 1} & 4294967295)" if bits == 32 else f"s.arg{i - 1}"
        return f"CAST(args[{i}] & 4294967295 AS BIGINT)" if bits == 32 else f"TRY_CAST(args[{i}] AS BIGINT)"
    return None


def paired_name(nr: int) -> str:
    """How the parser names a raw_syscalls call in `raw.syscall_spans`: "#74"."""
    return f"#{nr}"
