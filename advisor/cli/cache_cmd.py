"""`advisor cache`: list, size and clear the stores cached per capture."""

from __future__ import annotations

from typing import Optional

import typer

from advisor.cli.console import JsonFlag, err, out, print_json, table
from advisor.errors import UsageError

cache = typer.Typer(
    name="cache",
    help="The stores cached per capture (one store each, rebuilt on next use when removed).\n\n"
         "Example: advisor cache list",
    no_args_is_help=False,
    invoke_without_command=True,
)


@cache.callback()
def _default(ctx: typer.Context) -> None:
    """The stores cached per capture: where, how big, what they hold; clear them or cap their size.

    Example: advisor cache list

    Example: advisor cache clear --keep 2G
    """
    if ctx.invoked_subcommand is None:
        list_stores(json_out=False)


@cache.command("list")
def list_stores(json_out: JsonFlag = False) -> None:
    """Each cached store, least recently ingested first: size, when, the capture it holds.

    Example: advisor cache list --json
    """
    from advisor.store import cache_admin  # noqa: PLC0415 (DuckDB loads only for the commands that use it)
    from advisor.store.cache import cache_dir  # noqa: PLC0415

    held = cache_admin.stores()
    lost = cache_admin.orphans()
    total = sum(s.bytes for s in held) + sum(n for _, n in lost)
    if json_out:
        print_json({"directory": str(cache_dir()), "bytes": total, "stores": [s.as_dict() for s in held],
                    "orphaned_parts": [{"path": str(p), "bytes": n} for p, n in lost]})
        return
    t = table("store", "size", "ingested (UTC)", "format", "kernel", "records", title=f"cached stores in {cache_dir()}",
              right=("size", "records"), names=("store", "ingested (UTC)"))
    for s in held:
        d = s.as_dict()
        t.add_row(s.path.name, cache_admin.human(s.bytes), d["ingested"][:19].replace("T", " "),
                  d.get("format") or "?", d.get("kernel") or "", f"{d['events'] + d['blk_events']:,}" if "events" in d else "")
    out.print(t)
    out.print(f"{len(held)} store{'s' if len(held) != 1 else ''}, {cache_admin.human(sum(s.bytes for s in held))}")
    if lost:
        out.print(_orphans_line(lost), markup=False, highlight=False)


def _orphans_line(lost: list) -> str:
    from advisor.store.cache_admin import human  # noqa: PLC0415

    dirs = sum(1 for p, _ in lost if p.name.endswith(".parts"))
    what = [f"{dirs} parts director{'ies' if dirs != 1 else 'y'}"] if dirs else []
    if len(lost) > dirs:
        what.append(f"{len(lost) - dirs} checksum or log file{'s' if len(lost) - dirs != 1 else ''}")
    return (f"{' and '.join(what)} whose store was removed, {human(sum(b for _, b in lost))} "
            "(counted above): `advisor cache clear` removes them")


@cache.command("size")
def size(json_out: JsonFlag = False) -> None:
    """The cache's directory, number of stores and bytes, like `du -sh`.

    Example: advisor cache size
    """
    from advisor.store import cache_admin  # noqa: PLC0415
    from advisor.store.cache import cache_dir  # noqa: PLC0415

    held = cache_admin.stores(facts=False)
    lost = cache_admin.orphans()
    total = sum(s.bytes for s in held) + sum(n for _, n in lost)
    if json_out:
        print_json({"directory": str(cache_dir()), "stores": len(held), "bytes": total, "orphaned_parts": len(lost)})
        return
    out.print(f"{cache_admin.human(total)}\t{len(held)} stores\t{cache_dir()}", markup=False, highlight=False)
    if lost:
        err.print(_orphans_line(lost), markup=False, highlight=False)


@cache.command("clear")
def clear(
    keep: Optional[str] = typer.Option(None, "--keep", metavar="SIZE", help="Remove the least recently ingested stores until the rest fit in SIZE (500M, 2G)."),
    older_than: Optional[float] = typer.Option(None, "--older-than", metavar="DAYS", help="Remove only stores ingested more than DAYS days ago."),
    json_out: JsonFlag = False,
) -> None:
    """Remove cached stores (all of them by default); each is rebuilt from its capture on next use.
    Set $WRITEBACK_ADVISOR_CACHE_MAX (e.g. 2G) to apply --keep after every command.

    Example: advisor cache clear --older-than 30
    """
    if older_than is not None and older_than < 0:
        raise UsageError(f"--older-than must be a number of days >= 0, not {older_than:g}")
    from advisor.store import cache_admin  # noqa: PLC0415
    from advisor.store.cache import cache_dir  # noqa: PLC0415

    keep_bytes = cache_admin.parse_size(keep) if keep is not None else None
    older_than_s = None if older_than is None else older_than * 86400
    # Parts directories whose store is gone first: nothing reads them.
    freed = cache_admin.remove_orphans(older_than_s=older_than_s)
    removed = cache_admin.clear(keep_bytes=keep_bytes, older_than_s=older_than_s)
    freed += sum(s.bytes for s in removed)
    if json_out:
        print_json({"directory": str(cache_dir()), "removed": [str(s.path) for s in removed], "bytes_freed": freed,
                    "bytes_left": cache_admin.total_bytes()})
        return
    out.print(f"removed {len(removed)} store{'s' if len(removed) != 1 else ''} ({cache_admin.human(freed)}); "
              f"{cache_admin.human(cache_admin.total_bytes())} left in {cache_dir()}", markup=False, highlight=False)
