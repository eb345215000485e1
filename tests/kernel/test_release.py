"""Kernel release strings: upstream, vendor ABI names, ordering, bad input."""

from __future__ import annotations

import pytest

from advisor.errors import UsageError
from advisor.kernel import KernelRelease, parse_release, parse_version, upstream

# text, series, patch (None = hidden by the ABI name), rc, vendor, vendor_build
CASES = [
    # upstream
    ("6.8", "6.8", 0, None, "upstream", ()),
    ("6.8.12", "6.8", 12, None, "upstream", ()),
    ("5.11-rc4", "5.11", 0, 4, "upstream", ()),
    ("5.11.0-rc4", "5.11", 0, 4, "upstream", ()),
    ("v5.10.8", "5.10", 8, None, "upstream", ()),
    ("3.10", "3.10", 0, None, "upstream", ()),
    ("2.6.32", "2.6.32", 0, None, "upstream", ()),
    ("2.6.32.27", "2.6.32", 27, None, "upstream", ()),
    ("6.1.0+", "6.1", 0, None, "upstream", ()),
    ("6.9.0-rc2+", "6.9", 0, 2, "upstream", ()),
    # a -localversion does not change the base
    ("6.18.44-fc-v669", "6.18", 44, None, "custom", ()),
    ("6.8.12-060812-generic", "6.8", 12, None, "custom", ()),  # Ubuntu's mainline build: real version
    # Debian: the point is pinned at .0 (5.10.0-28 is 5.10.209)
    ("5.10.0-28-amd64", "5.10", None, None, "debian", (28,)),
    ("6.1.0-18-cloud-amd64", "6.1", None, None, "debian", (18,)),
    ("4.19.0-26-amd64", "4.19", None, None, "debian", (26,)),
    # Ubuntu: same ABI scheme
    ("6.8.0-45-generic", "6.8", None, None, "ubuntu", (45,)),
    ("5.15.0-105-lowlatency", "5.15", None, None, "ubuntu", (105,)),
    ("5.4.0-1103-aws", "5.4", None, None, "ubuntu", (1103,)),
    ("6.5.0-1018-azure", "6.5", None, None, "ubuntu", (1018,)),
    ("5.15.0-1050-gcp", "5.15", None, None, "ubuntu", (1050,)),
    # RHEL family (CentOS/Alma/Rocky share the el tags)
    ("4.18.0-553.el8_10.x86_64", "4.18", None, None, "rhel", (553,)),
    ("3.10.0-1160.el7.x86_64", "3.10", None, None, "rhel", (1160,)),
    ("5.14.0-427.13.1.el9_4.x86_64", "5.14", None, None, "rhel", (427, 13, 1)),
    ("2.6.32-358.15.1.el6.x86_64", "2.6.32", None, None, "rhel", (358, 15, 1)),
    ("3.10.0-65.el7", "3.10", None, None, "rhel", (65,)),
    ("5.14.0-427.13.1.el9_4.x86_64+debug", "5.14", None, None, "rhel", (427, 13, 1)),
    ("5.15.0-200.131.27.el8uek.x86_64", "5.15", None, None, "oracle-uek", (200, 131, 27)),
    # SUSE: a real upstream base plus backports
    ("4.12.14-122.46-default", "4.12", 14, None, "suse", (122, 46)),
    ("5.14.21-150500.55.39-default", "5.14", 21, None, "suse", (150500, 55, 39)),
    ("4.12.14-122.46.1-default", "4.12", 14, None, "suse", (122, 46, 1)),
    ("5.14.21-150500.33.29-azure", "5.14", 21, None, "suse", (150500, 33, 29)),
    # follow upstream stable points exactly
    ("6.5.6-300.fc39.x86_64", "6.5", 6, None, "fedora", (300,)),
    ("6.6.1-arch1-1", "6.6", 1, None, "arch", (1, 1)),
]

BACKPORTERS = {"debian", "ubuntu", "rhel", "oracle-uek", "suse"}


@pytest.mark.parametrize(("text", "series", "patch", "rc", "vendor", "build"), CASES, ids=[c[0] for c in CASES])
def test_parse(text, series, patch, rc, vendor, build):
    r = parse_release(text)
    assert (r.series, r.patch, r.rc, r.vendor, r.vendor_build) == (series, patch, rc, vendor, build)
    assert str(r) == text
    assert r.point_known == (patch is not None)
    assert r.may_carry_backports == (vendor in BACKPORTERS)


def test_fields():
    r = parse_release("2.6.32.27")
    assert (r.major, r.minor, r.legacy_sublevel, r.patch) == (2, 6, 32, 27)
    r = parse_release("6.8.12")
    assert (r.major, r.minor, r.legacy_sublevel, r.patch) == (6, 8, None, 12)
    assert parse_version("5.10.8") == parse_release("5.10.8")


def test_frozen():
    r = parse_release("6.8.12")
    assert isinstance(r, KernelRelease)
    with pytest.raises(AttributeError):
        r.patch = 13  # type: ignore[misc]


@pytest.mark.parametrize("text", ["banana", "", "6", "6.x.1", "-1.2", "6.8.x", "2.6", "v", "6.1.2.3"])
def test_malformed(text):
    with pytest.raises(UsageError) as e:
        parse_release(text)
    msg = str(e.value)
    assert repr(text) in msg and "\n" not in msg


def test_malformed_message():
    with pytest.raises(UsageError, match=r"^malformed kernel release 'banana': expected e\.g\. 6\.8\.12, 5\.10\.0-28-amd64 or 4\.18\.0-553\.el8_10\.x86_64$"):
        parse_release("banana")


@pytest.mark.parametrize(
    "ascending",
    [
        ["5.11-rc3", "5.11-rc4", "5.11", "5.11.1", "5.12-rc1"],
        ["2.6.32", "2.6.32.27", "2.6.39", "3.0", "3.0.1", "3.10", "3.11-rc1"],
        ["4.19.21", "4.20", "4.20.8", "5.0-rc1", "5.0", "5.9.16", "5.10", "6.8.12"],
        ["5.10.0-28-amd64", "5.10.1"],  # an unknown point sorts as .0
    ],
)
def test_order(ascending):
    keys = [parse_release(t).sort_key() for t in ascending]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_equal_order():
    assert parse_release("5.11").sort_key() == parse_release("5.11.0").sort_key() == parse_release("v5.11.0").sort_key()
    assert parse_release("5.11-rc4").sort_key() == parse_release("5.11.0-rc4").sort_key()


@pytest.mark.parametrize("text", ["5.10.8", "5.11-rc4", "2.6.32", "2.6.32.27", "5.0-rc1"])
def test_upstream(text):
    assert upstream(text).vendor == "upstream"


@pytest.mark.parametrize("text", ["banana", "5.10.0-28-amd64", "6.1.0+", "6.18.44-fc-v669", ""])
def test_upstream_rejects_with_value_error(text):
    with pytest.raises(ValueError) as e:
        upstream(text)
    assert not isinstance(e.value, UsageError)
    assert repr(text) in str(e.value)
