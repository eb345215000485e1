"""Kernel releases and affected ranges: does the traced kernel have a fix?"""

from advisor.kernel.ranges import AffectedRange, KernelStatus, StableFix, VendorFix, kernel_status
from advisor.kernel.release import KernelRelease, parse_release, parse_version, upstream

__all__ = [
    "AffectedRange",
    "KernelRelease",
    "KernelStatus",
    "StableFix",
    "VendorFix",
    "kernel_status",
    "parse_release",
    "parse_version",
    "upstream",
]
