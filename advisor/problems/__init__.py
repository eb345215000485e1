"""The five documented writeback problems, each in a package of its own.

    advisor/problems/<package>/rule.toml     the rule: events it reads (via views), metrics,
                                            thresholds, verdict, kernel ranges, messages
    advisor/problems/<package>/model.py      the replay's policy model before and after the fix
    advisor/problems/<package>/synthetic.py  the published benchmark as a synthetic workload
    advisor/problems/<package>/fixtures.py   trace snippets at and just below each threshold

Rule files ship inside the package and are read with importlib.resources, so an
installed wheel finds them wherever it is installed. A directory of rule files of
your own (`--rules-dir DIR`, or $WRITEBACK_ADVISOR_RULES) adds rules or replaces
bundled ones by id.

Models and synthetic workloads are imported only when a replay needs them, so
that no other command pays for their imports at start-up.
"""

from __future__ import annotations

import importlib
from importlib import resources
from importlib.resources.abc import Traversable
from types import ModuleType

# rule id → package, in the order reports list them.
PACKAGES: dict[str, str] = {
    "btrfs-delalloc-overflush": "btrfs_delalloc_overflush",
    "btrfs-full-fsync-fallback": "btrfs_full_fsync_fallback",
    "btrfs-snapshot-livelock": "btrfs_snapshot_livelock",
    "stable-page-wait": "stable_page_wait",
    "sync-flusher-stall": "sync_flusher_stall",
}


def rule_file(problem: str) -> Traversable:
    """The bundled rule file of a problem (a Traversable: a path, or inside a zip)."""
    return resources.files(f"{__name__}.{PACKAGES[problem]}").joinpath("rule.toml")


def rule_files() -> list[tuple[str, Traversable]]:
    return [(problem, rule_file(problem)) for problem in PACKAGES]


def _module(problem: str, name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{PACKAGES[problem]}.{name}")


def models() -> dict:
    """problem id → its ProblemModel (advisor.replay.model), for the replay."""
    return {problem: _module(problem, "model").MODEL for problem in PACKAGES}


def synthetic_workloads() -> dict[str, ModuleType]:
    """workload name → module (NAME, SUMMARY, DEVICE, PARAMS, build), in problem order."""
    mods = (_module(problem, "synthetic") for problem in ("btrfs-snapshot-livelock", "sync-flusher-stall", "stable-page-wait",
                                                           "btrfs-full-fsync-fallback", "btrfs-delalloc-overflush"))
    return {m.NAME: m for m in mods}


def threshold_cases() -> list:
    """Every problem's threshold fixtures (advisor.problems.fixtures.Case)."""
    return [c for problem in PACKAGES for c in _module(problem, "fixtures").CASES]
