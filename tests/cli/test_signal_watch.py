"""The thread that stops running queries on SIGINT/SIGTERM (advisor/cli/signals.py) can
wake while the main thread is still importing the module connections register in: an
ingest interrupted 0.3 s after its start printed "Exception in thread signal-watch" and
a traceback (AttributeError: the half-imported module had no interrupt_all yet)."""

from __future__ import annotations

import sys
import types

from advisor.cli import signals


def test_a_signal_during_the_import_of_the_interrupts_module_stops_nothing_and_raises_nothing(monkeypatch):
    half_imported = types.ModuleType("advisor.store.interrupts")  # stopped at its `import duckdb`
    monkeypatch.setitem(sys.modules, "advisor.store.interrupts", half_imported)
    monkeypatch.setattr(signals, "_seen_count", 0)
    monkeypatch.setattr(signals, "_handled_count", 1)  # the handler has run: one pass, no waiting
    signals._interrupt_until_handled(1)


def test_a_signal_interrupts_every_registered_connection(monkeypatch):
    asked = []
    loaded = types.ModuleType("advisor.store.interrupts")
    loaded.interrupt_all = lambda: asked.append(1) or 1
    monkeypatch.setitem(sys.modules, "advisor.store.interrupts", loaded)
    monkeypatch.setattr(signals, "_seen_count", 0)
    monkeypatch.setattr(signals, "_handled_count", 1)
    signals._interrupt_until_handled(1)
    assert asked == [1]
