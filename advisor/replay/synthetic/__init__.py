"""Synthetic workloads: a replayable workload built from a description instead of a
capture (`advisor replay --workload NAME[:key=value,...]`), including the benchmark setups
the fixes' authors published. Each problem's synthetic.py declares NAME, SUMMARY, its default DEVICE preset, PARAMS
and `build(values, machine) -> Workload`; the machine's parameters (memory, dirty
ratios, device figures) are common to all.
"""

from __future__ import annotations

from types import ModuleType

from advisor.errors import UsageError
from advisor.replay.synthetic.description import Param, resolve, split_description
from advisor.replay.synthetic.machine import MACHINE_PARAMS, machine_from
from advisor.replay.workload import Workload


def params_of(spec: ModuleType) -> dict[str, Param]:
    device = Param(spec.DEVICE, "ssd|nvme|hdd", "device preset; bw, lat, qd override its figures")
    return {**spec.PARAMS, "device": device, **MACHINE_PARAMS}


def build(description: str, workloads: dict[str, ModuleType]) -> Workload:
    """The workload a description stands for, among `workloads` (name → module, see
    advisor.problems.synthetic_workloads); unknown names or parameters and values that
    do not parse are usage errors (exit 2)."""
    name, given = split_description(description)
    if name not in workloads:
        raise UsageError(f"--workload: unknown workload {name!r}; known: {', '.join(workloads)}")
    values, text = resolve(name, params_of(workloads[name]), given)
    m = machine_from(values, values["device"])
    w = workloads[name].build(values, m)
    w.params = {"workload": name, **text}
    w.assumptions[:0] = m.assumptions()
    return w
