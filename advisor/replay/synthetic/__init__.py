"""Synthetic workloads: a replayable workload built from a description instead of a
capture (`advisor replay --workload NAME[:key=value,...]`), including the seeds' own
benchmark setups. Each module declares NAME, SUMMARY, its default DEVICE preset, PARAMS
and `build(values, machine) -> Workload`; the machine's parameters (memory, dirty
ratios, device figures) are common to all.
"""

from __future__ import annotations

from advisor.errors import UsageError
from advisor.replay.synthetic import dbench, fio_snapshot, fsmark_sync, fsync_jobs, untar
from advisor.replay.synthetic.description import Param, resolve, split_description
from advisor.replay.synthetic.machine import MACHINE_PARAMS, machine_from
from advisor.replay.workload import Workload

WORKLOADS = {m.NAME: m for m in (fio_snapshot, fsmark_sync, dbench, fsync_jobs, untar)}


def params_of(name: str) -> dict[str, Param]:
    spec = WORKLOADS[name]
    device = Param(spec.DEVICE, "ssd|nvme|hdd", "device preset; bw, lat, qd override its figures")
    return {**spec.PARAMS, "device": device, **MACHINE_PARAMS}


def build(description: str) -> Workload:
    """The workload a description stands for; unknown names or parameters and values
    that do not parse are usage errors (exit 2)."""
    name, given = split_description(description)
    if name not in WORKLOADS:
        raise UsageError(f"--workload: unknown workload {name!r}; known: {', '.join(WORKLOADS)}")
    values, text = resolve(name, params_of(name), given)
    m = machine_from(values, values["device"])
    w = WORKLOADS[name].build(values, m)
    w.params = {"workload": name, **text}
    w.assumptions[:0] = m.assumptions()
    return w
