"""Kernel release strings: what `uname -r` prints and what users pass as
`--kernel`, read into numbers that can be compared with rule boundaries.

The numbers in a release string do not always mean the same thing:

* Upstream `6.8.12` is series 6.8, stable point release 12. `5.11-rc4` is the
  fourth release candidate *before* 5.11, so it sorts below `5.11` (== `5.11.0`).
* The 2.6 era had one more level: `2.6.32.27` is series 2.6.32, point 27.
* Debian and Ubuntu print an ABI name: `5.10.0-28-amd64` is a 5.10.y kernel
  (that one is 5.10.209) but the point is pinned at `.0`, so the real stable
  point is not in the string at all.
* RHEL pins `.0` too (`4.18.0-553.el8_10.x86_64`) and backports fixes into its
  own build numbers (553); only the build says which fixes are in.
* SUSE keeps a real upstream base (`4.12.14-122.46-default` is 4.12.14) and
  backports on top, again visible only in the build (122.46).
* Fedora and Arch follow upstream stable points exactly (`6.5.6-300.fc39`).
* A `-localversion` (`6.18.44-fc-v669`) or a dirty-tree `+` (`6.1.0+`) does not
  change the base: the numbers are taken at face value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from advisor.errors import UsageError

VENDORS = ("upstream", "custom", "debian", "ubuntu", "rhel", "oracle-uek", "suse", "fedora", "arch")

# Vendors that backport fixes without changing the upstream numbers.
BACKPORTING = frozenset({"debian", "ubuntu", "rhel", "oracle-uek", "suse"})

# Vendors whose ABI name pins the stable point at .0: 5.10.0-28-amd64 is 5.10.209.
_POINT_HIDDEN = frozenset({"debian", "ubuntu", "rhel", "oracle-uek"})

_EXAMPLES = "expected e.g. 6.8.12, 5.10.0-28-amd64 or 4.18.0-553.el8_10.x86_64"

# X.Y[.Z[.W]] then an optional -rcN. The 4th number is only meaningful for 2.x.
_HEAD = re.compile(r"[vV]?(?P<nums>\d+(?:\.\d+){1,3})(?:-rc(?P<rc>\d+))?")

_DEBIAN_FLAVOURS = (
    r"(?:(?:cloud|rt)-)?(?:amd64|arm64|686|686-pae|armmp|armmp-lpae|marvell|rpi|powerpc64le|ppc64el"
    r"|s390x|loong64|riscv64|mips64r2el|mips32r2el|octeon|loongson-3|4kc-malta|5kc-malta|i386)(?:-unsigned)?"
)
# Debian: -28-amd64; backports: -0.deb11.13-amd64.
_DEBIAN = re.compile(rf"-(?P<abi>\d+(?:\.deb\d+\.\d+)?)-{_DEBIAN_FLAVOURS}")
_UBUNTU_FLAVOURS = (
    r"(?:generic|lowlatency|aws|azure|gcp|gke|gkeop|oracle|kvm|ibm|raspi2?|oem|nvidia|realtime|intel"
    r"|xilinx|virtual|server|lpae|bluefield|fips)(?:-[a-z0-9]+)*"
)
# Ubuntu: -45-generic, -1103-aws (the big ABI numbers are the cloud kernels).
_UBUNTU = re.compile(rf"-(?P<abi>\d+)-{_UBUNTU_FLAVOURS}")
# RHEL family and Oracle UEK: -553.el8_10.x86_64, -427.13.1.el9_4.x86_64+debug,
# -553.rt7.342.el8_10 (kernel-rt), -200.131.27.el8uek.x86_64.
_RHEL = re.compile(
    r"-(?P<build>\d+(?:\.\d+)*)(?:\.[a-z][a-z0-9_]*(?:\.\d+)*)?\.el\d+(?:_\d+)?(?P<uek>uek)?"
    r"(?:\.(?:x86_64|aarch64|ppc64le|ppc64|s390x|i686|i386|noarch))?(?:\.debug|\+[a-z0-9_]+)?"
)
# SUSE: -122.46-default, -150500.55.39-default, 3.0.74-0.6.6-default.
_SUSE = re.compile(r"-(?P<build>\d+(?:\.\d+)*)-(?:default|azure|rt|kvmsmall|64kb|preempt|vanilla|debug|xen|trace|pae|ec2|zfcpdump|lpae|bigmem)")
_FEDORA = re.compile(r"-(?P<build>\d+(?:\.\d+)*)\.fc\d+(?:\.(?:x86_64|aarch64|ppc64le|s390x|i686|armv7hl))?(?:\+[a-z0-9_]+)?")
# Arch: 6.6.1-arch1-1 (also -zen1-1-zen, -hardened1-1-hardened, -1-lts).
_ARCH = re.compile(r"-(?:arch|zen|hardened)(?P<a>\d+)-(?P<b>\d+)(?:-zen|-hardened)?|-(?P<lts>\d+)-lts")


@dataclass(frozen=True)
class KernelRelease:
    """One kernel release string, read.

    `patch` is the stable point (12 in 6.8.12, 27 in 2.6.32.27) or None when the
    string hides it (Debian/Ubuntu/RHEL ABI names). `legacy_sublevel` is the third
    number of a 2.x release (32 in 2.6.32.27) and None from 3.0 on.
    """

    text: str
    major: int
    minor: int
    patch: int | None
    rc: int | None = None
    vendor: str = "upstream"
    vendor_build: tuple[int, ...] = ()
    legacy_sublevel: int | None = None
    suffix: str = ""  # what follows the numbers: "-28-amd64", ".x86_64", "+", ""

    @property
    def series(self) -> str:
        """"5.10" for 5.10.7; "2.6.32" for 2.6.32.27 (2.6.x releases were series of their own)."""
        if self.legacy_sublevel is not None:
            return f"{self.major}.{self.minor}.{self.legacy_sublevel}"
        return f"{self.major}.{self.minor}"

    @property
    def point_known(self) -> bool:
        return self.patch is not None

    @property
    def may_carry_backports(self) -> bool:
        return self.vendor in BACKPORTING

    def series_key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.legacy_sublevel or 0)

    def sort_key(self) -> tuple[int, ...]:
        """Total order for upstream versions: 5.11-rc4 < 5.11 == 5.11.0 < 5.11.1,
        2.6.32 < 2.6.39 < 3.0. An unknown point sorts as 0: check point_known."""
        rc_rank = (0, self.rc) if self.rc is not None else (1, 0)
        return (*self.series_key(), self.patch or 0, *rc_rank)

    def __str__(self) -> str:
        return self.text


def _malformed(text: str, why: str = _EXAMPLES) -> UsageError:
    return UsageError(f"malformed kernel release {text!r}: {why}")


def parse_release(text: str) -> KernelRelease:
    """Read a `uname -r` string or a `--kernel` value; UsageError if malformed."""
    s = text.strip()
    m = _HEAD.match(s)
    if m is None:
        raise _malformed(text)
    nums = [int(n) for n in m["nums"].split(".")]
    rest = s[m.end():]
    if rest.startswith("."):
        raise _malformed(text)  # 6.8.x: a dotted part that is not a number
    major, minor = nums[0], nums[1]
    legacy: int | None = None
    if major <= 2:
        # 2.6.32.27: series 2.6.32, point 27.
        if len(nums) < 3:
            raise _malformed(text, "2.x releases have three-part series such as 2.6.32")
        legacy, nums = nums[2], nums[:2] + nums[3:]
    elif len(nums) > 3:
        raise _malformed(text)  # 6.1.2.3: no such release from 3.0 on
    patch = nums[2] if len(nums) > 2 else 0
    rc = int(m["rc"]) if m["rc"] is not None else None
    vendor, build, point = _vendor(rest, major, minor, patch)
    return KernelRelease(
        text=text, major=major, minor=minor, patch=point, rc=rc, vendor=vendor,
        vendor_build=build, legacy_sublevel=legacy, suffix=rest,
    )


parse_version = parse_release


def _ints(s: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", s))


def _vendor(rest: str, major: int, minor: int, patch: int) -> tuple[str, tuple[int, ...], int | None]:
    """(vendor, vendor_build, patch-or-None) from what follows the numbers."""
    if rest in ("", "+"):
        return "upstream", (), patch  # 6.1.0+: built from a tree past the tag
    if m := _RHEL.fullmatch(rest):
        vendor = "oracle-uek" if m["uek"] else "rhel"
        # UEK 4.14.35-2047... shows a real point; RHEL's .0 (and 2.6.32's missing 4th) hides it.
        point = patch if patch and vendor == "oracle-uek" else None
        return vendor, _ints(m["build"]), point
    if m := _FEDORA.fullmatch(rest):
        return "fedora", _ints(m["build"]), patch
    if m := _ARCH.fullmatch(rest):
        return "arch", _ints(m.group(0)), patch
    if patch == 0 and (m := _DEBIAN.fullmatch(rest)):
        return "debian", _ints(m["abi"]), None
    if m := _UBUNTU.fullmatch(rest):
        abi = m["abi"]
        # Ubuntu's mainline builds spell the real version: 6.8.12-060812-generic.
        if len(abi) == 6 and abi == f"{major:02d}{minor:02d}{patch:02d}":
            return "custom", (), patch
        if patch == 0:
            return "ubuntu", _ints(abi), None
    # After Ubuntu: both have an -azure flavour, but Ubuntu's point is .0 and its ABI one number.
    if m := _SUSE.fullmatch(rest):
        return "suse", _ints(m["build"]), patch  # 4.12.14 is a real upstream base
    return "custom", (), patch  # 6.18.44-fc-v669: a local build of 6.18.44


def upstream(text: str) -> KernelRelease:
    """A rule-file boundary such as "5.10.8", "5.11-rc4" or "2.6.32"; ValueError
    (a bug in the rule data, not the user's input) unless it is a plain upstream version."""
    try:
        rel = parse_release(text)
    except UsageError as e:
        raise ValueError(str(e)) from None
    if rel.vendor != "upstream" or rel.suffix:
        raise ValueError(f"rule boundary {text!r} is not a plain upstream version such as 5.10.8 or 5.11-rc4")
    return rel
