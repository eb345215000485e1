"""Which block devices carry the traced filesystem's own requests.

The block tracepoints fire on every request queue. A filesystem on a loop device
(/dev/loop0, 7,0) backed by a file on /dev/vda (254,0) shows each of its writes twice:
once on 7,0, then again on 254,0 when the loop driver writes the backing file (direct
I/O or through that file's page cache), mixed there with whatever else the host wrote.
Counting both doubles the bytes written and blends two devices' latencies into one.

ext4 and XFS write through the block device's bdi, so their writeback events name the
device ("7:0"); btrfs's bdi is its own ("btrfs-1") and names none. A loop device with
write requests is the upper device of a stack: the other devices' writes include its
backing file's, and nothing in a request says which are which.
"""

from __future__ import annotations

from dataclasses import dataclass

# include/uapi/linux/major.h: LOOP_MAJOR
LOOP_MAJOR = 7


@dataclass(frozen=True)
class DeviceChoice:
    """The devices kept ("MAJ,MIN" as block_requests names them), the ones left out with
    their write requests, and why."""

    kept: tuple[str, ...]
    dropped: dict[str, int]
    why: str = ""

    def where(self) -> str | None:
        """A block_requests predicate keeping only `kept`, or None when nothing is left out."""
        if not self.dropped:
            return None
        return "dev IN (" + ", ".join("'" + d.replace("'", "''") + "'" for d in self.kept) + ")"

    def note(self) -> str:
        if not self.dropped:
            return ""
        left = ", ".join(f"{d} ({n:,} write requests)" for d, n in sorted(self.dropped.items()))
        return f"block requests of {', '.join(self.kept)} only; left out: {left}: {self.why}"


def _major(dev: str) -> int | None:
    head = dev.split(",", 1)[0].strip()
    return int(head) if head.isdigit() else None


def choose(writes: dict[str, int], named_bdis: list[str]) -> DeviceChoice:
    """From the write requests per device and the block-device bdi names the writeback
    events carry ("7:0"), the devices whose requests are the filesystem's."""
    devs = sorted(writes)
    if len(devs) <= 1:
        return DeviceChoice(tuple(devs), {})
    named = [d for d in devs if d.replace(",", ":") in set(named_bdis)]
    candidates, why = devs, ""
    if named and len(named) < len(devs):
        candidates = named
        why = "the capture's writeback events name no other block device, so their requests are not this filesystem's"
    loops = [d for d in candidates if _major(d) == LOOP_MAJOR]
    if loops and len(loops) < len(candidates):
        candidates = loops
        why = ("a loop device's writes reach the device under its backing file a second time, mixed there with that "
               "device's other writes, so counting both would count the filesystem's writes twice")
    dropped = {d: writes[d] for d in devs if d not in candidates}
    return DeviceChoice(tuple(candidates), dropped, why if dropped else "")


def workload_devices(con, named_bdis: list[str]) -> DeviceChoice:
    """`choose` over the block_requests view on `con`."""
    rows = con.execute("SELECT dev, count(*) FROM block_requests WHERE write AND dev IS NOT NULL GROUP BY dev").fetchall()
    return choose({r[0]: int(r[1]) for r in rows}, named_bdis)
