"""The machine a synthetic workload runs on: memory and dirty thresholds, the device,
and how fast buffered writers can dirty pages before balance_dirty_pages holds them.

Writers and the page cache as a fluid (mm/page-writeback.c, simplified):
- a writer dirties at `write_rate` (the cost of copying into the page cache) while the
  dirty count is under vm.dirty_ratio of memory;
- above vm.dirty_background_ratio the flusher writes back at the device's bandwidth,
  oldest dirtying first; pages older than dirty_expire_centisecs (30 s) are written too;
- at the dirty limit, balance_dirty_pages paces the writers to the writeback rate, so
  they dirty at the device's bandwidth from then on.
The kernel takes the ratios of *dirtyable* memory (free + file pages), a little less than
all of it, and ramps the throttling in between the thresholds; both are stated as
assumptions of every synthetic replay.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from advisor.replay import device as devices
from advisor.errors import UsageError
from advisor.replay.device import Device
from advisor.replay.synthetic.description import Param

DIRTY_EXPIRE_NS = 30_000_000_000  # vm.dirty_expire_centisecs = 3000
MAX_EVENTS = 200_000_000  # ~6 GiB of event arrays: beyond that a description is a typo

MACHINE_PARAMS = {
    "mem": Param("16G", "size", "memory; the dirty thresholds are ratios of it"),
    "dirty_ratio": Param("20", "number", "vm.dirty_ratio, % of memory dirty before writers are throttled"),
    "dirty_background_ratio": Param("10", "number", "vm.dirty_background_ratio, % at which the flusher starts"),
    "bw": Param("0", "rate", "device write bandwidth (0: the preset's)", zero_ok=True),
    "lat": Param("0", "duration", "device time per request at queue depth 1 (0: the preset's)", zero_ok=True),
    "qd": Param("0", "number", "requests the device overlaps (0: the preset's)", zero_ok=True),
}


@dataclass(frozen=True)
class Machine:
    mem: int
    dirty_ratio: float
    background_ratio: float
    device: Device

    @property
    def limit_bytes(self) -> float:
        return self.mem * self.dirty_ratio / 100

    @property
    def background_bytes(self) -> float:
        return self.mem * self.background_ratio / 100

    def assumptions(self) -> list[str]:
        return [
            f"dirty limit {self.dirty_ratio:g}% and background threshold {self.background_ratio:g}% of all "
            f"{self.mem / 2**30:g} GiB (the kernel takes them of dirtyable memory)",
            "balance_dirty_pages as a fluid: writers run at their own speed up to the dirty limit, then at the "
            "writeback rate; background writeback writes the oldest dirtying first",
        ]


def machine_from(values: dict, device_preset: str) -> Machine:
    dev = devices.preset(device_preset, bandwidth=float(values["bw"]) or None,
                         latency_ns=int(values["lat"]) or None, queue_depth=float(values["qd"]) or None)
    if values["bw"] or values["lat"] or values["qd"]:
        dev = Device(**{**dev.__dict__, "name": "described",
                        "source": f"the description's figures over preset '{device_preset}'"})
    return Machine(int(values["mem"]), float(values["dirty_ratio"]), float(values["dirty_background_ratio"]), dev)


@dataclass(frozen=True)
class Dirtying:
    """Cumulative bytes dirtied and written back over time, piecewise linear."""

    knots_ns: np.ndarray
    dirtied: np.ndarray  # bytes dirtied by each knot
    background_start_ns: float
    writeback_rate: float  # bytes/ns once background writeback runs

    def times_of(self, positions: np.ndarray) -> np.ndarray:
        """When the byte at each cumulative position was dirtied (ns)."""
        return np.interp(positions, self.dirtied, self.knots_ns)

    def cleaned_at(self, positions: np.ndarray, dirtied_ns: np.ndarray) -> np.ndarray:
        """When background writeback took each byte: in dirtying order at the writeback
        rate, or once it is older than dirty_expire, whichever is first."""
        by_rate = self.background_start_ns + positions / self.writeback_rate
        return np.minimum(by_rate, dirtied_ns + DIRTY_EXPIRE_NS)


def throttled(m: Machine, write_rate: float, until_ns: float) -> Dirtying:
    """Buffered writers wanting `write_rate` bytes/s on machine `m`, from t=0."""
    r = write_rate / 1e9  # bytes per ns
    b = m.device.bandwidth / 1e9
    t_bg = m.background_bytes / r
    knots, dirtied = [0.0], [0.0]
    if r > b:
        # Dirty count grows at r - b from the background threshold to the limit; then
        # the writers are paced at b.
        t_limit = t_bg + (m.limit_bytes - m.background_bytes) / (r - b)
        if t_limit < until_ns:
            knots.append(t_limit)
            dirtied.append(r * t_limit)
            knots.append(until_ns)
            dirtied.append(r * t_limit + b * (until_ns - t_limit))
    if len(knots) == 1:
        knots.append(until_ns)
        dirtied.append(r * until_ns)
    return Dirtying(np.array(knots), np.array(dirtied), t_bg, min(r, b))


def check_size(workload: str, events: float) -> int:
    """A description may not ask for more than MAX_EVENTS dirtying events."""
    if events > MAX_EVENTS:
        raise UsageError(f"--workload {workload}: would generate {events:,.0f} dirtying events; "
                         f"the limit is {MAX_EVENTS:,} (shorten the runtime or raise the unit size)")
    return int(events)
