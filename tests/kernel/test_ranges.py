"""Affected ranges: the five real ranges of the research digest, tested just
before and just after each fix in mainline, in each stable series and in each
vendor build they name."""

from __future__ import annotations

import pytest

from advisor.kernel import AffectedRange, StableFix, VendorFix, kernel_status, parse_release

SNAPSHOT_LIVELOCK = AffectedRange(
    introduced_in=None,
    fixed_in="5.0-rc1",
    stable=(
        StableFix("4.20", "4.20.8", "btrfs snapshot livelock: 4.20.8 changelog", "confirmed"),
        StableFix("4.19", "4.19.21", "btrfs snapshot livelock: 4.19.21 queue", "inferred"),
    ),
)
SYNC_FLUSHER_STALL = AffectedRange(
    introduced_in="2.6.32",
    fixed_in="3.11",
    vendor=(VendorFix("rhel", "3.10", "65", "RHEL 7 kernel changelog", "confirmed"),),
)
STABLE_PAGE_WAIT = AffectedRange(
    introduced_in="3.0",
    fixed_in="3.9-rc1",
    vendor=(VendorFix("rhel", "2.6.32", "358.15.1", "RHEL 6 kernel changelog", "confirmed"),),
)
FULL_FSYNC_FALLBACK = AffectedRange(
    introduced_in=None,
    fixed_in="5.9-rc1",
    vendor=(VendorFix("suse", "4.12", "122.46.1", "SLE12 SP5 kernel changelog", "confirmed"),),
)
DELALLOC_OVERFLUSH = AffectedRange(
    introduced_in="5.10-rc1",
    fixed_in="5.11-rc4",
    stable=(StableFix("5.10", "5.10.8", "5.10.8 changelog", "confirmed"),),
)

A, F, N, U = "affected", "fixed", "not-yet-affected", "unknown"

BOUNDARIES = {
    "snapshot-livelock": (
        SNAPSHOT_LIVELOCK,
        [
            ("4.20.7", A), ("4.20.8", F),
            ("4.19.20", A), ("4.19.21", F),
            ("4.14.99", A),
            ("4.20", A), ("5.0-rc1", F), ("5.0", F), ("6.8.12", F),
            ("4.19.0-26-amd64", U),  # Debian hides the 4.19 point that matters
            ("4.18.0-553.el8_10.x86_64", U),  # RHEL 8 may have backported it; no VendorFix entry
            ("5.14.0-427.13.1.el9_4.x86_64", F),  # 5.14 base is past 5.0-rc1
        ],
    ),
    "sync-flusher-stall": (
        SYNC_FLUSHER_STALL,
        [
            ("2.6.31", N), ("2.6.32", A), ("2.6.32.27", A),
            ("3.10.108", A), ("3.11-rc7", A), ("3.11", F),
            ("3.10.0-64.el7", A), ("3.10.0-65.el7", F), ("3.10.0-1160.el7.x86_64", F),
            ("2.6.32-358.15.1.el6.x86_64", U),  # RHEL 6: no VendorFix for 2.6.32
        ],
    ),
    "stable-page-wait": (
        STABLE_PAGE_WAIT,
        [
            ("2.6.39", N), ("3.0", A), ("3.8.13", A), ("3.9-rc1", F), ("3.9", F),
            # RHEL 6 backported 3.0's stable pages: the VendorFix decides, not introduced_in
            ("2.6.32-358.14.1.el6", A), ("2.6.32-358.15.1.el6", F),
            ("2.6.32-358.el6.x86_64", A),  # GA 358 is before z-stream 358.15.1
            ("2.6.32-754.35.1.el6.x86_64", F),
        ],
    ),
    "full-fsync-fallback": (
        FULL_FSYNC_FALLBACK,
        [
            ("5.8.18", A), ("5.9-rc1", F), ("5.9", F),
            ("5.4.60", A),  # only patch 1/3 went to 5.4
            ("4.12.14-122.45-default", A), ("4.12.14-122.46.1-default", F),
            ("4.12.14-122.46-default", F),  # uname of rpm 122.46.1: SUSE drops the rebuild counter
            ("4.12.14-122.201-default", F),
            ("5.14.21-150500.55.39-default", F),
        ],
    ),
    "delalloc-overflush": (
        DELALLOC_OVERFLUSH,
        [
            ("5.9.16", N), ("5.10-rc1", A), ("5.10", A), ("5.10.7", A), ("5.10.8", F), ("5.10.209", F),
            ("5.11-rc3", A), ("5.11-rc4", F), ("5.11", F),
            ("5.15.0-105-generic", F),  # series 5.15 > 5.11: the point does not matter
            ("5.10.0-28-amd64", U),  # Debian hides the point (it is 5.10.209)
            ("6.8.0-45-generic", F),
            ("4.18.0-553.el8_10.x86_64", N),  # 4.18 < 5.10: before the bug
            ("5.9.0-1-custom", N),
            ("6.1.0+", F), ("5.10.7-fc-v1", A),
        ],
    ),
}

CASES = [(name, text, want) for name, (_, rows) in BOUNDARIES.items() for text, want in rows]


@pytest.mark.parametrize(("name", "text", "want"), CASES, ids=[f"{n}:{t}" for n, t, _ in CASES])
def test_boundary(name, text, want):
    st = kernel_status(parse_release(text), BOUNDARIES[name][0])
    assert st.status == want, st.reason
    assert text in st.reason and "\n" not in st.reason
    assert (st.upgrade_to != ()) == (want == A)


def test_no_release():
    st = kernel_status(None, DELALLOC_OVERFLUSH)
    assert st.status == U and "--kernel" in st.reason and st.upgrade_to == ()


@pytest.mark.parametrize(
    ("rng", "text", "upgrade_to"),
    [
        (DELALLOC_OVERFLUSH, "5.10.7", ("5.10.8", "5.11")),
        (DELALLOC_OVERFLUSH, "5.10-rc1", ("5.10.8", "5.11")),
        (DELALLOC_OVERFLUSH, "5.11-rc3", ("5.11",)),
        (SNAPSHOT_LIVELOCK, "4.20.7", ("4.20.8", "5.0")),
        (SNAPSHOT_LIVELOCK, "4.19.20", ("4.19.21", "5.0")),
        (SNAPSHOT_LIVELOCK, "4.14.99", ("4.19.21", "5.0")),  # nearest newer series with the backport
        (SYNC_FLUSHER_STALL, "3.10.108", ("3.11",)),
        (SYNC_FLUSHER_STALL, "3.10.0-64.el7.x86_64", ("3.10.0-65.el7.x86_64",)),
        (STABLE_PAGE_WAIT, "2.6.32-358.14.1.el6", ("2.6.32-358.15.1.el6",)),
        (FULL_FSYNC_FALLBACK, "5.8.18", ("5.9",)),
    ],
)
def test_upgrade_to(rng, text, upgrade_to):
    assert kernel_status(parse_release(text), rng).upgrade_to == upgrade_to


def test_reasons_name_versions():
    st = kernel_status(parse_release("5.10.7"), DELALLOC_OVERFLUSH)
    assert "5.10-rc1" in st.reason and "5.11-rc4" in st.reason and "5.10.8" in st.reason
    st = kernel_status(parse_release("5.10.0-28-amd64"), DELALLOC_OVERFLUSH)
    assert "Debian" in st.reason and "5.10.8" in st.reason and "/proc/version" in st.reason
    st = kernel_status(parse_release("4.18.0-553.el8_10.x86_64"), SNAPSHOT_LIVELOCK)
    assert "backport" in st.reason and "changelog" in st.reason and "{" not in st.reason
    st = kernel_status(parse_release("4.19.21"), SNAPSHOT_LIVELOCK)
    assert st.status == F and "inferred" in st.reason
    st = kernel_status(parse_release("5.9.16"), DELALLOC_OVERFLUSH)
    assert "5.10-rc1" in st.reason


@pytest.mark.parametrize(
    "make",
    [
        lambda: AffectedRange(None, "banana"),
        lambda: AffectedRange("5.11", "5.10"),
        lambda: AffectedRange(None, "5.11-rc4", stable=(StableFix("5.11", "5.11.2", "", "confirmed"),)),
        lambda: AffectedRange("5.10-rc1", "5.11-rc4", stable=(StableFix("5.4", "5.4.90", "", "confirmed"),)),
        lambda: StableFix("5.10", "5.9.8", "", "confirmed"),
        lambda: StableFix("5.10", "5.10", "", "confirmed"),
        lambda: StableFix("5.10", "5.10.8", "", "sure"),
        lambda: VendorFix("fedora", "6.5", "300", "", "confirmed"),
        lambda: VendorFix("rhel", "3.10.0", "65", "", "confirmed"),
        lambda: VendorFix("rhel", "3.10", "65.el7", "", "confirmed"),
    ],
)
def test_bad_rule_data(make):
    with pytest.raises(ValueError):
        make()
