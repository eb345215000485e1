"""Which block devices carry the traced filesystem's own requests.

The block tracepoints fire on every request queue. A filesystem on a loop device
(/dev/loop0, 7,0) backed by a file on /dev/vda (254,0) shows each of its writes twice:
once on 7,0, then again on 254,0 when the loop driver writes the backing file (direct
I/O or through that file's page cache), mixed there with whatever else the host wrote.
Counting both doubles the bytes written and blends two devices' latencies into one.

ext4 and XFS write through the block device's bdi, so their writeback events name the
device ("7:0"); btrfs's bdi is its own ("btrfs-1") and names none. With btrfs on
/dev/loop0 and the root ext4 on /dev/vda, the events name 254:0 only: there the devices
they do not name are btrfs's, not the other way round. A loop device with
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
    caveat: str = ""  # what the kept devices' bytes may count more than once, when nothing was left out
    # Writes the devices under a kept loop device received beyond what the loop device sent
    # them: another filesystem sharing the disk, whose traffic slows the loop's requests.
    shared: str = ""

    def where(self) -> str | None:
        """A block_requests predicate keeping only `kept`, or None when nothing is left out."""
        if not self.dropped:
            return None
        return "dev IN (" + ", ".join("'" + d.replace("'", "''") + "'" for d in self.kept) + ")"

    def note(self) -> str:
        if not self.dropped:
            return self.caveat
        left = ", ".join(f"{d} ({n:,} write requests)" for d, n in sorted(self.dropped.items()))
        note = f"block requests of {', '.join(self.kept)} only; left out: {left}: {self.why}"
        return f"{note}; {self.caveat}" if self.caveat else note


def _major(dev: str) -> int | None:
    head = dev.split(",", 1)[0].strip()
    return int(head) if head.isdigit() else None


def choose(writes: dict[str, int], named_bdis: list[str], write_bytes: dict[str, int] | None = None,
           queued_bytes: dict[str, int] | None = None, btrfs: bool = False) -> DeviceChoice:
    """From the write requests per device and the block-device bdi names the writeback
    events carry ("7:0"), the devices whose requests are the filesystem's; `btrfs`: the
    capture shows a btrfs filesystem, whose devices no writeback event names. With the
    requests' write bytes per device and the bytes of the write bios queued per device
    (block_bio_queue; None when not recorded), a named device without requests (md,
    device-mapper) counts each of its bytes once: the devices under it, largest first,
    until they hold one copy."""
    devs = sorted(writes)
    upper = _without_requests(writes, named_bdis)
    if not devs or (len(devs) == 1 and not upper):
        return DeviceChoice(tuple(devs), {})
    named_devs = _as_devs(named_bdis)
    named = [d for d in devs if d in named_devs]
    # A named device with queued write bios and no requests (md, device-mapper) is a
    # filesystem's device whose requests are on devices the writeback events need not name.
    bio_based = [d for d in upper if queued_bytes and queued_bytes.get(d, 0) > 0]
    candidates, why = devs, ""
    if named and len(named) < len(devs) and not bio_based:
        if btrfs:
            candidates = [d for d in devs if d not in named_devs]
            why = (f"btrfs's writeback events name no block device (its bdi is btrfs-N), and those that do name "
                   f"{', '.join(named)}: another filesystem's")
        else:
            candidates = named
            why = "the capture's writeback events name no other block device, so their requests are not this filesystem's"
    loops = [d for d in candidates if _major(d) == LOOP_MAJOR]
    shared = ""
    if loops and len(loops) < len(candidates):
        shared = _shared_with_loops(loops, [d for d in candidates if d not in loops], write_bytes or {})
        candidates = loops
        why = ("a loop device's writes reach the device under its backing file a second time, mixed there with that "
               "device's other writes, so counting both would count the filesystem's writes twice")
    caveat = ""
    if upper and candidates:
        if queued_bytes is None:
            caveat = (f"the writeback events name {', '.join(upper)}, which has no requests in the capture: if it is an md "
                      f"or device-mapper device, its writes are counted on {', '.join(candidates)}, once per copy if "
                      "mirrored (block:block_bio_queue would show its own bytes)")
        elif bio_based:
            candidates, why, caveat = _one_copy(candidates, bio_based, write_bytes or {}, queued_bytes, why)
    dropped = {d: writes[d] for d in devs if d not in candidates}
    return DeviceChoice(tuple(candidates), dropped, why if dropped else "", caveat, shared)


# Under this share of the loop devices' own bytes, the other writes are the backing
# filesystem's journal and metadata for the image file, not another workload.
_SHARED_MIN_SHARE = 0.1


def _shared_with_loops(loops: list[str], under: list[str], write_bytes: dict[str, int]) -> str:
    """What the devices under the loop devices wrote beyond the loop devices' own writes
    (each write of a loop device reaches its backing file's device once more): on a host
    whose root disk also took a build's 628 MB while a sync ran on the loop device, the
    loop's median write took 2.5 ms there against 0.87 ms over the whole capture."""
    sent = sum(write_bytes.get(d, 0) for d in loops)
    extra = sum(write_bytes.get(d, 0) for d in under) - sent
    if sent <= 0 or extra <= _SHARED_MIN_SHARE * sent:
        return ""
    return (f"{', '.join(under)}, the device{'s' if len(under) > 1 else ''} under the loop device{'s' if len(loops) > 1 else ''}, "
            f"wrote {extra / 1e6:,.0f} MB beyond the {sent / 1e6:,.0f} MB {', '.join(loops)} sent: another filesystem sharing "
            "the disk, whose writes slow the loop device's requests while they run and which a sync writes too, one "
            "filesystem after another; the replay's device model is fitted over the whole capture and replays none of them")


def _as_devs(bdis: list[str]) -> set[str]:
    """bdi names of block devices ("7:0") as block_requests names devices ("7,0")."""
    return {b.replace(":", ",") for b in bdis}


def _without_requests(writes: dict[str, int], named_bdis: list[str]) -> list[str]:
    """The named devices with no write requests; major 0 is no block device (NFS, FUSE: "0:53")."""
    return sorted(d for d in _as_devs(named_bdis) - writes.keys() if _major(d))


def _one_copy(candidates: list[str], upper: list[str], write_bytes: dict[str, int], queued_bytes: dict[str, int],
              why: str) -> tuple[list[str], str, str]:
    """The devices under a bio-based upper device that hold one copy of its writes:
    copies = their write bytes / the upper device's queued write bytes, rounded (2 for a
    two-way mirror, 1 striped or linear; 1.5 rounds to 2: a three-disk RAID5 writes half
    a stripe per disk plus parity), then the largest of them until they hold 1/copies of
    their bytes. Copies on one device (a mirror of two partitions of one disk: the
    requests name the disk) cannot be told apart: the caveat says so."""
    names = ", ".join(upper)
    mine = sum(queued_bytes.get(d, 0) for d in upper)
    under = sum(write_bytes.get(d, 0) for d in candidates)
    if mine <= 0 or under <= 0:
        return candidates, why, ""
    copies = round(under / mine)
    if copies < 2:
        return candidates, why, ""
    kept, held = [], 0
    for d in sorted(candidates, key=lambda d: (-write_bytes.get(d, 0), d)):
        kept.append(d)
        held += write_bytes.get(d, 0)
        if held * copies >= under:
            break
    what = (f"{names} has no requests of its own (md or device-mapper): its {mine:,} bytes of queued writes reached "
            f"{', '.join(candidates)} as {under:,} bytes of write requests ({under / mine:.1f}×: mirrored or with parity)")
    if len(kept) == len(candidates):
        return candidates, why, f"{what}; its copies share a device here, so byte counts from these requests count each write more than once"
    reason = f"{what}, so one copy is counted"
    return sorted(kept), (f"{why}; {reason}" if why else reason), ""


def workload_devices(con, views) -> DeviceChoice:
    """`choose` over the block_requests view on `con`, with the write bios queued per
    device when block_bio_queue was recorded (read only when a named device has no
    requests: most captures have none such)."""
    rows = con.execute("SELECT dev, count(*), coalesce(sum(bytes), 0) FROM block_requests "
                       "WHERE write AND dev IS NOT NULL GROUP BY dev").fetchall()
    writes = {r[0]: int(r[1]) for r in rows}
    named = views.filesystems.other_bdis
    queued = None
    table = views.present.find("block:block_bio_queue")
    if table and views.present.has_fields("block:block_bio_queue", ("dev", "nr_sector", "rwbs")):
        queued = {}
        if _without_requests(writes, named):
            queued = {r[0]: int(r[1]) for r in con.execute(
                f'SELECT dev_major(dev) || \',\' || dev_minor(dev), sum(CAST(nr_sector AS UBIGINT) * 512) FROM "{table[0]}" '
                "WHERE rwbs LIKE '%W%' GROUP BY ALL").fetchall()}
    return choose(writes, named, {r[0]: int(r[2]) for r in rows}, queued, "btrfs" in views.filesystems.shown)
