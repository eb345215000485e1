"""Does a kernel have a fix? Affected ranges from rule data, evaluated against
one KernelRelease.

A fix lands in mainline once (`5.11-rc4`: every 5.11 and later has it), and may
be backported to older stable series at their own point releases (5.10.8 for
5.10); a 5.10.y below that point is affected, and so is every point of a series
that got no backport. Vendor kernels are different: RHEL's `3.10.0-1160.el7`
and SUSE's `4.12.14-122.46-default` carry backports that only their build
numbers reveal, and Debian's `5.10.0-28-amd64` hides its stable point (5.10.209)
entirely, so those answer "unknown" unless the rule data names the vendor build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from advisor.kernel.release import BACKPORTING, KernelRelease, upstream

CONFIDENCES = ("confirmed", "inferred")
STATUSES = ("affected", "fixed", "not-yet-affected", "unknown")

_VENDOR_NAMES = {"rhel": "RHEL-family", "oracle-uek": "Oracle UEK", "suse": "SUSE", "debian": "Debian", "ubuntu": "Ubuntu"}
_CHANGELOG = {
    "rhel": "`rpm -q --changelog kernel`",
    "oracle-uek": "`rpm -q --changelog kernel-uek`",
    "suse": "`rpm -q --changelog kernel-default`",
    "debian": "`apt changelog linux-image-$(uname -r)`",
    "ubuntu": "`apt changelog linux-image-$(uname -r)`",
}
# Where the upstream version behind an ABI name can be read.
_UPSTREAM_HINT = {
    "debian": "the end of /proc/version (e.g. 'Debian 5.10.209-2')",
    "ubuntu": "the last word of /proc/version_signature (e.g. 'Ubuntu 5.15.0-105.115-generic 5.15.148')",
}


def _a(name: str) -> str:
    return ("an " if name[0] in "AEIOU" else "a ") + name


def _check_confidence(confidence: str) -> None:
    if confidence not in CONFIDENCES:
        raise ValueError(f"confidence {confidence!r} is not one of {', '.join(CONFIDENCES)}")


def _check_series(series: str) -> None:
    rel = upstream(series)
    if rel.series != series:
        raise ValueError(f"series {series!r} is not a bare series such as 5.10 or 2.6.32")


@dataclass(frozen=True)
class StableFix:
    """A stable/longterm series that received the backport: 4.20 in 4.20.8."""

    series: str
    fixed_in: str
    source: str
    confidence: str

    def __post_init__(self) -> None:
        _check_series(self.series)
        rel = upstream(self.fixed_in)
        if rel.series != self.series or not rel.patch or rel.rc is not None:
            raise ValueError(f"stable fix {self.fixed_in!r} is not a point release of the {self.series} series")
        _check_confidence(self.confidence)


@dataclass(frozen=True)
class VendorFix:
    """A vendor kernel build that carries the fix: RHEL 7 (series 3.10) from build 65,
    i.e. 3.10.0-65.el7."""

    vendor: str
    series: str
    fixed_build: str
    source: str
    confidence: str

    def __post_init__(self) -> None:
        if self.vendor not in BACKPORTING:
            raise ValueError(f"vendor {self.vendor!r} is not one of {', '.join(sorted(BACKPORTING))}")
        _check_series(self.series)
        if not re.fullmatch(r"\d+(?:\.\d+)*", self.fixed_build):
            raise ValueError(f"vendor build {self.fixed_build!r} is not dotted numbers such as 65 or 122.46.1")
        _check_confidence(self.confidence)

    @property
    def build(self) -> tuple[int, ...]:
        return tuple(int(n) for n in self.fixed_build.split("."))


@dataclass(frozen=True)
class AffectedRange:
    """Mainline [introduced_in, fixed_in) plus the backports. introduced_in None:
    long-standing. Rule authors write the rc a fix landed in ("5.0-rc1"), not "5.0"."""

    introduced_in: str | None
    fixed_in: str
    stable: tuple[StableFix, ...] = ()
    vendor: tuple[VendorFix, ...] = ()

    def __post_init__(self) -> None:
        fixed = upstream(self.fixed_in)
        intro = upstream(self.introduced_in) if self.introduced_in is not None else None
        if intro is not None and intro.sort_key() >= fixed.sort_key():
            raise ValueError(f"introduced_in {self.introduced_in!r} is not before fixed_in {self.fixed_in!r}")
        seen: set[str] = set()
        for sf in self.stable:
            key = upstream(sf.series).series_key()
            if sf.series in seen or key >= fixed.series_key() or (intro is not None and key < intro.series_key()):
                raise ValueError(f"stable fix for {sf.series} does not fit the range {self.introduced_in}..{self.fixed_in}")
            seen.add(sf.series)

    def policy_labels(self) -> tuple[str, str]:
        """Which kernels run the policy before the fix and which the fixed one, for the
        replay's columns: ("5.10-rc1 up to 5.11-rc4 (5.10 before 5.10.8)",
        "5.11-rc4 and later, 5.10.8+")."""
        stable_before = [f"{sf.series} before {sf.fixed_in}" for sf in self.stable]
        stable_after = [f"{sf.fixed_in}+" for sf in self.stable]
        vendor_before = [f"{_VENDOR_NAMES.get(v.vendor, v.vendor)} {v.series} before build {v.fixed_build}" for v in self.vendor]
        vendor_after = [f"{_VENDOR_NAMES.get(v.vendor, v.vendor)} {v.series} build {v.fixed_build}+" for v in self.vendor]
        span = f"{self.introduced_in} up to {self.fixed_in}" if self.introduced_in else f"before {self.fixed_in}"
        before = span + (f" ({', '.join(stable_before + vendor_before)})" if stable_before or vendor_before else "")
        # Kernels before introduced_in are not listed under either: they ran older code
        # (pdflush before 2.6.32), which neither model stands for.
        after = ", ".join([f"{self.fixed_in} and later", *stable_after, *vendor_after])
        return before, after

    def stable_fix(self, series: str) -> StableFix | None:
        return next((sf for sf in self.stable if sf.series == series), None)

    def vendor_fix(self, release: KernelRelease) -> VendorFix | None:
        return next((vf for vf in self.vendor if vf.vendor == release.vendor and vf.series == release.series), None)


@dataclass(frozen=True)
class KernelStatus:
    status: str  # one of STATUSES
    reason: str  # one sentence naming versions, no trailing period
    upgrade_to: tuple[str, ...] = ()  # nearest fixed releases; empty unless affected


def _at_or_after(rel: KernelRelease, bound: KernelRelease) -> bool | None:
    """rel >= bound, or None when rel hides its point and bound is a point of its series."""
    if not rel.point_known and rel.series_key() == bound.series_key() and bound.patch:
        return None
    return rel.sort_key() >= bound.sort_key()


def _mainline_release(bound: KernelRelease) -> str:
    """The release to move to for a mainline fix: "5.11" for "5.11-rc4"."""
    return bound.series if bound.rc is not None or not bound.patch else bound.text


def _note(confidence: str) -> str:
    return "" if confidence == "confirmed" else f" ({confidence})"


def _vendor_build_ge(rel: KernelRelease, vf: VendorFix) -> bool:
    fixed = vf.build
    # SUSE's uname drops the rpm rebuild counter: rpm 4.12.14-122.46.1 runs as
    # 4.12.14-122.46-default, so 122.46 is the same kernel as build 122.46.1.
    if rel.vendor == "suse" and len(fixed) == len(rel.vendor_build) + 1:
        fixed = fixed[:-1]
    return rel.vendor_build >= fixed


def _vendor_upgrade(rel: KernelRelease, vf: VendorFix) -> str:
    """3.10.0-64.el7.x86_64 -> 3.10.0-65.el7.x86_64: the same string at the fixed build."""
    old = "-" + ".".join(map(str, rel.vendor_build))
    i = rel.text.find(old)
    if i < 0:
        return f"{rel.series} build {vf.fixed_build}"
    return rel.text[:i] + "-" + vf.fixed_build + rel.text[i + len(old):]


def _vendor_unknown(rel: KernelRelease, fixed_in: str) -> KernelStatus:
    name = _VENDOR_NAMES.get(rel.vendor, rel.vendor)
    return KernelStatus(
        "unknown",
        f"{rel} is {_a(name)} kernel, which may carry a backport of the fix (in mainline from {fixed_in}) "
        f"that the version string cannot show; check its changelog ({_CHANGELOG.get(rel.vendor, 'the package changelog')}) for the fix",
    )


def _hidden_point(rel: KernelRelease, matters: str, fixed_in: str) -> KernelStatus:
    """Debian's 5.10.0-28-amd64 is 5.10.209, but only /proc/version or the changelog says so."""
    if rel.vendor not in _UPSTREAM_HINT:  # RHEL's .0 is a base it backports onto
        return _vendor_unknown(rel, fixed_in)
    name = _VENDOR_NAMES.get(rel.vendor, rel.vendor)
    where = _UPSTREAM_HINT.get(rel.vendor, "the package changelog")
    return KernelStatus(
        "unknown",
        f"{rel} is {_a(name)} ABI name for a {rel.series}.y release with the stable point hidden ({name} keeps it at .0), "
        f"and the point matters here ({matters}); read the upstream version from {where} "
        f"or {_CHANGELOG.get(rel.vendor, 'the changelog')}",
    )


def kernel_status(release: KernelRelease | None, rng: AffectedRange) -> KernelStatus:
    """Whether `release` has the fix described by `rng`."""
    if release is None:
        return KernelStatus("unknown", "The capture records no kernel release; pass --kernel (e.g. --kernel 6.8.12) to check this fix")
    rel = release
    fixed = upstream(rng.fixed_in)

    # A named vendor build decides, even before introduced_in: RHEL 6's 2.6.32
    # carried a backport of 3.0's stable-pages code, so its series says nothing.
    vf = rng.vendor_fix(rel) if rel.may_carry_backports else None
    if vf is not None:
        name = _VENDOR_NAMES.get(rel.vendor, rel.vendor)
        what = f"{rel} is {name} {rel.series} build {'.'.join(map(str, rel.vendor_build))}"
        if _vendor_build_ge(rel, vf):
            return KernelStatus("fixed", f"{what}, at or after build {vf.fixed_build}, the first with the fix{_note(vf.confidence)}")
        return KernelStatus(
            "affected", f"{what}, before build {vf.fixed_build}, the first with the fix{_note(vf.confidence)}", (_vendor_upgrade(rel, vf),)
        )

    if rng.introduced_in is not None:
        after_intro = _at_or_after(rel, upstream(rng.introduced_in))
        if after_intro is None:
            return _hidden_point(rel, f"the bug arrived in {rng.introduced_in}", rng.fixed_in)
        if not after_intro:
            return KernelStatus("not-yet-affected", f"{rel} predates {rng.introduced_in}, where the bug was introduced")

    has_fix = _at_or_after(rel, fixed)
    if has_fix is None:
        return _hidden_point(rel, f"the fix landed in {rng.fixed_in}", rng.fixed_in)
    if has_fix:
        shown = str(rel) if rel.point_known else f"{rel} ({rel.series}.y)"
        return KernelStatus("fixed", f"{shown} is at or after {rng.fixed_in}, where the fix landed in mainline")

    sf = rng.stable_fix(rel.series)
    if sf is not None:
        if not rel.point_known:
            return _hidden_point(rel, f"the fix reached the {sf.series} stable series in {sf.fixed_in}", rng.fixed_in)
        if rel.sort_key() >= upstream(sf.fixed_in).sort_key():
            return KernelStatus("fixed", f"{rel} has the fix: it reached the {sf.series} stable series in {sf.fixed_in}{_note(sf.confidence)}")
    if rel.may_carry_backports:
        return _vendor_unknown(rel, rng.fixed_in)

    if rng.introduced_in is None:
        where = f"{rel} is affected: the bug is long-standing and mainline fixed it in {rng.fixed_in}"
    else:
        where = f"{rel} is affected: the bug arrived in {rng.introduced_in} and mainline fixed it in {rng.fixed_in}"
    upgrades: list[str] = []
    if sf is not None:
        where += f"; the fix reached the {sf.series} stable series in {sf.fixed_in}{_note(sf.confidence)}"
        upgrades.append(sf.fixed_in)
    elif rel.series_key() == fixed.series_key():
        where += f"; {rel} is a release candidate before the fix"
    else:
        where += f"; the {rel.series} series got no stable backport"
        newer = [s for s in rng.stable if upstream(s.series).series_key() > rel.series_key()]
        if newer:  # the nearest longer-lived series that has it: 4.14.99 -> 4.19.21
            upgrades.append(min(newer, key=lambda s: upstream(s.fixed_in).sort_key()).fixed_in)
    upgrades.append(_mainline_release(fixed))
    return KernelStatus("affected", where, tuple(dict.fromkeys(upgrades)))
