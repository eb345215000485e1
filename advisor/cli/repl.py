"""The interactive SQL shell of `advisor sql` (no query given)."""

from __future__ import annotations

import signal
import time

from advisor.cli import signals
from advisor.cli.console import err
from advisor.cli.results import FORMATS, run_statements
from advisor.errors import AdvisorError
from advisor.store.cache import cache_dir

HELP = """\
Statements end with ';' and may span lines. Commands:
  .tables            tables and views with row counts
  .schema [NAME]     columns of a table or view (all when no name)
  .info              facts about the capture (trace_info)
  .stats             non-zero parse statistics (lost events, damage)
  .mode FORMAT       output: table, csv or json
  .timer on|off      print how long each query took
  .help              this text
  .quit              leave (Ctrl-D works too)"""


def _history():
    try:
        import readline
    except ImportError:  # pragma: no cover - not on Linux
        return None
    path = cache_dir() / "sql_history"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            readline.read_history_file(path)
    except OSError:
        return None
    readline.set_history_length(2000)
    return readline, path


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def dot_query(con, line: str) -> str | None:
    """The SQL behind an informational dot command (.tables, .schema [NAME],
    .info, .stats), or None when `line` is not one of them."""
    parts = line.split()
    cmd, args = parts[0], parts[1:]
    if cmd == ".tables":
        names = con.execute(
            "SELECT table_name, table_type FROM information_schema.tables"
            " WHERE table_schema = 'main' ORDER BY table_type DESC, table_name"
        ).fetchall()
        if not names:
            return "SELECT NULL::VARCHAR AS name, NULL::VARCHAR AS kind, NULL::BIGINT AS rows WHERE false"
        counts = " UNION ALL ".join(
            f"SELECT {_literal(n)} AS name, {_literal('view' if k == 'VIEW' else 'table')} AS kind,"
            f" (SELECT count(*) FROM {_quote(n)}) AS rows"
            for n, k in names
        )
        return f"SELECT * FROM ({counts}) ORDER BY kind DESC, name"
    if cmd == ".schema":
        where = "table_schema = 'main'" + (f" AND table_name = {_literal(args[0])}" if args else "")
        return (
            "SELECT table_name AS \"table\", column_name AS \"column\", data_type AS type"
            f" FROM information_schema.columns WHERE {where} ORDER BY table_name, ordinal_position"
        )
    if cmd == ".info":
        return "SELECT key, value FROM trace_info ORDER BY key"
    if cmd == ".stats":
        return "SELECT * FROM parse_stats WHERE count > 0 AND severity <> 'info' ORDER BY name, cpu"
    return None


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class Shell:
    def __init__(self, con, max_rows: int):
        self.con = con
        self.mode = "table"
        self.timer = False
        self.max_rows = max_rows

    def command(self, line: str) -> bool:
        """Run a dot command; False to quit."""
        parts = line.split()
        cmd, args = parts[0], parts[1:]
        if cmd in (".quit", ".exit", ".q"):
            return False
        query = dot_query(self.con, line)
        if query is not None:
            self.sql(query)
        elif cmd == ".help":
            err.print(HELP)
        elif cmd == ".mode" and args and args[0] in FORMATS[:3]:
            self.mode = args[0]
        elif cmd == ".timer" and args and args[0] in ("on", "off"):
            self.timer = args[0] == "on"
        else:
            err.print(f"[red]unknown command {line!r}[/] (.help lists them)")
        return True

    def sql(self, query: str) -> None:
        started = time.perf_counter()
        failed, n = None, 0
        with signals.deferred() as got:
            try:
                n = run_statements(self.con, query, self.mode, None, self.max_rows)
            except AdvisorError as e:
                failed = e
        if got.signum == signal.SIGTERM:
            raise signals.Terminated()  # `kill` ends the shell; Ctrl-C ends only the query, as in psql
        if got.signum is not None:
            signals.handled()
            err.print("interrupted")
            return
        if failed is not None:
            err.print(f"[red]error:[/] {failed}")
            return
        if self.timer:
            err.print(f"[dim]{n} rows in {time.perf_counter() - started:.3f} s[/]")

    def loop(self) -> None:
        hist = _history()
        err.print("[bold]advisor sql[/]: SQL over the capture; .help for commands, Ctrl-D to quit.")
        buf: list[str] = []
        try:
            while True:
                try:
                    line = input("   ...> " if buf else "advisor> ")
                except EOFError:
                    err.print()
                    break
                except KeyboardInterrupt:
                    signals.handled()
                    err.print()
                    buf = []
                    continue
                if not buf and line.strip().startswith("."):
                    if not self.command(line.strip()):
                        break
                    continue
                buf.append(line)
                text = "\n".join(buf).strip()
                if text.endswith(";"):
                    buf = []
                    self.sql(text)
                elif not text:
                    buf = []
        finally:
            if hist:
                readline, path = hist
                try:
                    readline.write_history_file(path)
                except OSError:
                    pass
