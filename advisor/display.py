"""How a metric value reads for people, the same in the replay's Rich tables and the
HTML report: "–" for unmeasured, yes/no, four significant digits, thousands separators in
quantities but never in identifiers (pids, inodes, timestamps: `display_id`), no exponents."""

from __future__ import annotations


def display_value(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if v.is_integer() or abs(v) >= 1e4:
            return f"{v:,.0f}"  # 268,600 rather than 2.686e+05
        return f"{v:.4g}" if abs(v) >= 1e-4 else f"{v:.2e}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


# -C x86-tsc (TSC cycles) or -C counter: the capture's timestamps count ticks, not time.
TICKS_CAVEAT = "timestamps are not nanoseconds: no duration can be measured"


def capture_span(c: dict) -> str:
    """A capture's time span as analyze's document gives it (span_seconds, span_ticks)."""
    if c.get("span_ticks") is not None:
        return f"{c['span_ticks']:,} clock ticks: {TICKS_CAVEAT}"
    return "n/a" if c["span_seconds"] is None else f"{c['span_seconds']:.3f} s"


def lost_any(c: dict) -> bool:
    """Whether analyze's capture facts show any events lost."""
    return bool(c["lost_events"] or c.get("lost_gaps_uncounted") or c.get("kernel_overwritten"))


def lost_detail(c: dict) -> str:
    """What the counted lost events of analyze's capture facts leave out, if anything:
    "; 32 more gaps of unknown size; the kernel counted 31,606 overwritten"."""
    text = ""
    gaps, kernel = c.get("lost_gaps_uncounted") or 0, c.get("kernel_overwritten") or 0
    if gaps:
        text += f"; {gaps:,} more gap{'s' if gaps > 1 else ''} of unknown size"
    if kernel > c["lost_events"]:
        text += f"; the kernel counted {kernel:,} overwritten"
    return text


def display_id(v) -> str:
    """An evidence cell: integers as the trace prints them (pid 3556, ts 1174483689309,
    not 3,556 and 1,174,483,689,309), floats with three decimals (milliseconds)."""
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


# Columns that hold identifiers or timestamps, in any table a person reads: printed as the
# trace prints them (pid 3556, not 3,556).
ID_COLUMNS = frozenset({"pid", "tgid", "ppid", "ino", "inode", "cpu", "ts", "start_ts", "end_ts", "sector", "dev", "seq"})

# Raw numbers people read in hex: ioctl commands are built by _IOW(0x94, 23, ...) = 0x50009417;
# flag words are bits (btrfs_flush_space flags=4 is METADATA, 0x4; i_state I_SYNC is 0x80).
HEX_COLUMNS = frozenset({"cmd", "flags", "i_state", "gfp_flags"})


def named_columns(columns: list[str], rows: list[list]) -> tuple[list[str], list[list[str]]]:
    """Evidence for people: a raw number followed by its decoded name (`cmd`, `cmd_name`;
    `sync_mode`, `sync_mode_name`) is one column, "BTRFS_IOC_SNAP_CREATE_V2 (0x50009417)",
    "WB_SYNC_ALL (1)"; the JSON keeps both. Every other cell as `display_id` writes it."""
    keep, pairs = [], {}
    for i, c in enumerate(columns):
        if c.endswith("_name") and i > 0 and columns[i - 1] == c[: -len("_name")]:
            pairs[i - 1] = i
            continue
        keep.append(i)
    out_rows = []
    for r in rows:
        cells = []
        for i in keep:
            if i in pairs:
                raw, name = r[i], r[pairs[i]]
                shown = "" if raw is None else f"{raw:#x}" if columns[i] in HEX_COLUMNS and isinstance(raw, int) else str(raw)
                cells.append(shown if name in (None, "", shown) else f"{name} ({shown})")
            else:
                cells.append(display_id(r[i]))
        out_rows.append(cells)
    return [columns[i] for i in keep], out_rows
