"""A kernel whose release says it has a fix may not run it (a custom build, a vendor
kernel without the backport). Where the capture shows the code path, the replay takes
the policy it shows as the kernel's own, says so, and --kernel still decides when given.
The lab captures: the same 6.1.192 build with "sync: don't block the flusher thread
waiting on IO" reverted, and stock."""

from __future__ import annotations

import json

from advisor.problems.sync_flusher_stall.model import MODEL
from advisor.replay.workload import from_store
from advisor.store import open_store
from advisor.views import attach
from tests.conftest import SAMPLES
from tests.helpers import advisor as run_cli

REVERT = "lab-sync-flusher-stall-revert-run1-v7-zstd.dat"
STOCK = "lab-sync-flusher-stall-stock-run1-v7-zstd.dat"


def _replay(name: str, *args: str) -> dict:
    r = run_cli("replay", str(SAMPLES / name), "--problem", "sync-flusher-stall", "--json", *args)
    assert r.code == 0, r.err
    return json.loads(r.out)


def _own(doc: dict) -> dict:
    [row] = [r for r in doc["results"] if r["own_kernel"]]
    return row


def test_the_reverted_kernel_is_replayed_as_the_policy_it_shows():
    doc = _replay(REVERT)
    own = _own(doc)
    assert own["policy"] == "wait-per-inode"
    assert "627 of the 627 inodes" in own["own_kernel_shown"]
    assert any("implies for-sync, so this capture's kernel is replayed as wait-per-inode" in w for w in doc["warnings"])


def test_kernel_named_on_the_command_line_still_decides():
    doc = _replay(REVERT, "--kernel", "6.1.192")
    own = _own(doc)
    assert own["policy"] == "for-sync" and own["own_kernel_shown"] is None
    assert any("yet --kernel 6.1.192 runs for-sync" in w for w in doc["warnings"])


def test_the_stock_kernel_shows_no_flusher_waits():
    doc = _replay(STOCK)
    own = _own(doc)
    assert own["policy"] == "for-sync" and own["own_kernel_shown"] is None
    assert not any("WB_SYNC_ALL sync work" in w for w in doc["warnings"])


def test_without_page_wait_events_the_release_decides(store_of):
    with open_store(store_of(REVERT)) as con:
        full = from_store(con, REVERT, views=attach(con))
        cut = from_store(con, REVERT, views=attach(con, hide=frozenset({"writeback:folio_wait_writeback"})))
    assert full.sync_all_waited_inodes == (627, 627)
    assert MODEL.shown_policy(full)[0] == "wait-per-inode"
    assert cut.sync_all_waited_inodes is None and MODEL.shown_policy(cut) is None


def test_analyze_quotes_the_replay_with_the_policy_the_capture_shows():
    r = run_cli("analyze", str(SAMPLES / REVERT), "--rule", "sync-flusher-stall", "--json")
    assert r.code == 0, r.err
    [f] = json.loads(r.out)["findings"]
    # The finding's kernel reason says what the capture shows; the quote does not repeat it.
    assert "yet this capture shows the code before the fix running" in f["message"]
    assert "it runs the policy before the fix)" in f["message"] and f["message"].count("627 of the 627") == 1
