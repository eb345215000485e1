"""Where output goes, as `git`, `rg` and `btt` do it: the results a command was asked for
on stdout (Rich tables when stdout is a terminal, plain aligned text when it is a pipe or
a file, one JSON document with --json); progress, warnings and errors on stderr.

The options commands share (--json, --limit, --rules-dir) are declared here once, and so are
the help's metavars (TRACE..., FILE, N) instead of Typer's type names (<list[Path]>, <bool>).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from advisor.cli.fit import Fitted, fit

#: Progress bars, warnings, errors: what people watch while a command runs.
err = Console(stderr=True, highlight=False)


def _stdout_width() -> int | None:
    """A pipe has no width: COLUMNS when the caller set it, else wide enough that no table
    is cut (a file is read with `less -S` or grep, not at 80 columns)."""
    if sys.stdout.isatty():
        return None  # the terminal's own
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else 160


class _Results(Console):
    """stdout. Piped, a line ends at its last character (Rich pads every line of a table
    or title to the table's width; trailing blanks are noise in a file)."""

    def _render_buffer(self, buffer) -> str:
        text = super()._render_buffer(buffer)
        if self.is_terminal:
            return text
        return "\n".join(line.rstrip() for line in text.split("\n"))

    def print(self, *objects, crop: bool = False, **kwargs) -> None:
        # A table wider than the width (advisor.cli.fit) is printed whole, not cropped.
        super().print(*objects, crop=crop, **kwargs)

    def on_broken_pipe(self) -> None:
        # Rich exits 1 here; the reader going away is not an error (`advisor io X | head -1`):
        # advisor.cli.main ends the command quietly with exit 0.
        raise BrokenPipeError


#: Results the user asked for.
out = _Results(highlight=False, width=_stdout_width())


def file_console(f) -> Console:
    """Results written to a file (--output): plain text, lines without trailing blanks."""
    return _Results(file=f, highlight=False, width=160, force_terminal=False)


def terminal() -> bool:
    """Rich (boxes, colour) on stdout only when a person is looking at it."""
    return out.is_terminal


# --- the options every command shares ---------------------------------------------------
JsonFlag = Annotated[bool, typer.Option("--json", help="The result as one JSON document on stdout (progress and warnings stay on stderr).")]
RulesDirOption = Annotated[Optional[Path], typer.Option(
    "--rules-dir", metavar="DIR", help="Your own rule files (*.toml): one with a bundled rule's id replaces it, the others are added.")]
DEFAULT_LIMIT = 20


def limit_option(default: int = DEFAULT_LIMIT, what: str = "rows per table") -> object:
    """--limit N: how many rows a table shows; a cut table ends with "N more rows (--limit)"."""
    return typer.Option(default, "--limit", "-n", metavar="N", min=1, help=f"{what[0].upper()}{what[1:]} shown; a cut table says how many it left out.")


def more_rows(left_out: int, hint: str = "--limit") -> Text:
    """The line under a cut table."""
    return Text(f"… {left_out:,} more row{'s' if left_out != 1 else ''} ({hint})", style="dim")


# --- tables and sections that read well on a terminal and in a file --------------------
class _Titled(Table):
    """A table whose title is a line of its own above it: never wrapped to the table's
    width, never widening the table."""

    heading: str | None = None
    units: dict[str, str] | None = None  # header → unit, for the legend of abbreviated headers
    short: dict[str, str] | None = None  # header → its abbreviation, when one reads better than initials
    abbreviate: bool = True
    _fitted: Fitted | None = None

    def fitted_width(self, width: int) -> int:
        """Fit the table to `width` (once: its headers are then abbreviated) and return the
        width it needs, more than `width` when its least is wider."""
        if self._fitted is None:
            self._fitted = fit(self, width, self.units, self.short, self.abbreviate)
        return self._fitted.width

    def __rich_console__(self, console, options):
        if self.heading:
            yield Text(self.heading, style="bold" if console.is_terminal else "", no_wrap=True, overflow="ignore")
        self.fitted_width(options.max_width)
        fitted = self._fitted
        if fitted is not None and fitted.width > options.max_width:
            options = options.update_width(fitted.width)  # whole, wider than asked, never cut
        yield from super().__rich_console__(console, options)
        if fitted is not None and fitted.legend is not None:
            yield fitted.legend


def table(*columns: str, title: str | None = None, right: tuple[str, ...] = (), names: tuple[str, ...] = (),
          units: dict[str, str] | None = None, short: dict[str, str] | None = None, abbreviate: bool = True) -> Table:
    """A results table. On a terminal: Rich's header rule; piped: no box, two spaces between
    columns, the header as the first line (grep/awk/column read it). `right`: numeric
    columns; `names`: columns that must never wrap or be cut (metric names, ioctl names).
    Too wide for the width, it abbreviates headers with a legend under it (`units`: header →
    unit, named in the legend; `short`: header → abbreviation) and wraps cells only between words (advisor.cli.fit);
    `abbreviate=False`: headers stay whole (a query's columns, which the reader names in
    the next query)."""
    if terminal():
        t = _Titled(box=box.SIMPLE_HEAD, show_edge=False, header_style="bold", pad_edge=False, padding=(0, 1, 0, 0))
    else:
        t = _Titled(box=None, show_edge=False, header_style="", pad_edge=False, padding=(0, 2, 0, 0))
    t.heading = title
    t.units = units
    t.short = short
    t.abbreviate = abbreviate
    for c in columns:
        t.add_column(c, justify="right" if c in right else "left", no_wrap=c in names, overflow="fold")
    return t


def section(title: RenderableType, body: RenderableType, style: str = "dim") -> RenderableType:
    """A titled block: a Rich panel on a terminal (the title inside the body when it would
    not fit the top border, so it is never cut), a title line and the body when piped."""
    if not terminal():
        return Group(title if isinstance(title, Text) else Text(str(title)), body, Text(""))
    heading = title if isinstance(title, Text) else Text(str(title))
    if heading.cell_len + 8 > out.width:
        return _Section(Panel(Group(heading, body), border_style=style), heading, body)
    return _Section(Panel(body, title=heading, title_align="left", border_style=style), heading, body)


class _Section:
    """A panel, unless a table in it is wider than the panel's inside even at its least
    (advisor.cli.fit): then the title and the body without a border, so nothing is cut."""

    PANEL_EDGES = 4  # "│ " and " │"

    def __init__(self, panel: Panel, heading: Text, body: RenderableType):
        self.panel, self.heading, self.body = panel, heading, body

    def __rich_console__(self, console, options):
        inside = options.max_width - self.PANEL_EDGES
        if any(t.fitted_width(inside) > inside for t in _tables(self.body)):
            yield Group(self.heading, self.body, Text(""))
        else:
            yield self.panel


def _tables(r) -> list:
    if isinstance(r, _Titled):
        return [r]
    return [t for child in getattr(r, "renderables", ()) for t in _tables(child)]


def print_json(doc) -> None:
    """A JSON document on stdout."""
    sys.stdout.write(json.dumps(doc, indent=2, default=_default) + "\n")
    sys.stdout.flush()


def _default(o):
    if isinstance(o, (bytes, bytearray)):
        return o.hex()
    if hasattr(o, "isoformat"):
        return o.isoformat()
    return str(o)


def warn(message: str) -> None:
    err.print(f"[yellow]warning:[/] {message}", markup=True, highlight=False, soft_wrap=True)


# --- help metavars ----------------------------------------------------------------------
def _metavar(self, ctx) -> str:
    """What --help prints after an option: its metavar, nothing for a flag, else the
    option's name (--device DEVICE) rather than Click's type name (TEXT, PATH)."""
    if self.metavar is not None:
        return self.metavar
    if getattr(self, "is_flag", False):
        return ""
    choices = getattr(getattr(self, "type", None), "choices", None)
    if choices:
        return "|".join(str(c) for c in choices)
    return (self.name or "value").upper()


def real_metavars() -> None:
    """Typer's help prints type names where Click and every Unix tool print a metavar:
    `<path>` beside an argument already named TRACE..., `{TRACE...}` in the usage line,
    `TEXT` after an option. This makes --help print metavars (Typer 0.28's help code,
    typer/rich_utils.py: an option's type column is `make_metavar`, an argument's is its
    type's `get_metavar` or `<type name>`)."""
    from typer import core  # noqa: PLC0415
    from typer._click import types  # noqa: PLC0415

    core.TyperOption.make_metavar = _metavar
    core.TyperArgument.get_usage_pieces = lambda self, ctx: [_usage_name(self)]
    plain = types.ParamType.get_metavar

    def argument_type_column(self, param, ctx):
        # An argument's metavar names it already (TRACE...): no type beside it.
        return "" if isinstance(param, core.TyperArgument) else plain(self, param, ctx)

    types.ParamType.get_metavar = argument_type_column


def _usage_name(self) -> str:
    """The usage line: `advisor io [OPTIONS] TRACE...`, `advisor sql TRACE [QUERY]`, not
    Typer's `{TRACE...}...`."""
    name = self.metavar or (self.name or "ARG").upper() + ("..." if self.nargs != 1 else "")
    return name if self.required else f"[{name}]"
