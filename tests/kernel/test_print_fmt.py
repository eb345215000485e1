"""Reading __print_flags / __print_symbolic tables out of print formats the kernel writes."""

from __future__ import annotations

from advisor.kernel.print_fmt import constant, value_names

# writeback_mark_inode_dirty on 6.1 (abridged): shifts, two tables in one format.
MARK_DIRTY = ('"bdi %s: ino=%lu state=%s flags=%s", REC->name, (unsigned long)REC->ino, '
              '__print_flags(REC->state, "|", {(1 << 0), "I_DIRTY_SYNC"}, {(1 << 2), "I_DIRTY_PAGES"}, {(1 << 7), "I_SYNC"}, '
              '{(1 << 11), "I_DIRTY_TIME"} ), __print_flags(REC->flags, "|", {(1 << 0), "I_DIRTY_SYNC"}, {(1 << 2), "I_DIRTY_PAGES"} )')
# mm_vmscan_memcg_reclaim_begin (abridged): casts, nested parentheses, a multi-bit name
# before its bits, a ternary printing "none" for 0, and the table's NULL terminator.
GFP = ('"order=%d gfp_flags=%s", REC->order, (REC->gfp_flags) ? __print_flags(REC->gfp_flags, "|", '
       '{( unsigned long)((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u) | (( gfp_t)0x80u)), "GFP_KERNEL"}, '
       '{( unsigned long)((( gfp_t)(0x400u|0x800u)) | (( gfp_t)0x40u)), "GFP_NOFS"}, '
       '{( unsigned long)(( gfp_t)0x02u), "__GFP_HIGHMEM"}, {( unsigned long)(( gfp_t)0x40u), "__GFP_IO"}, '
       '{ 0, ((void *)0) }) : "none"')
# btrfs_sync_file: 64-bit symbols written as negative numbers, inside a ternary.
ROOT = ('"root=%llu(%s)", REC->root_objectid, ((REC->root_objectid >= -9ULL)) ? __print_symbolic(REC->root_objectid, '
        '{ 5ULL, "FS_TREE" }, { -6ULL, "TREE_LOG" }, { -9ULL, "DATA_RELOC_TREE" }) : "-"')
# A 6.x inode-state table the kernel left unexpanded: names, not numbers.
UNEXPANDED = '"state=%s", __print_flags(REC->state, "|", {I_DIRTY_SYNC, "I_DIRTY_SYNC"}, {(1 << 2), "I_DIRTY_PAGES"})'


def test_flags_are_named_in_table_order_and_the_rest_in_hex():
    state, flags = value_names(MARK_DIRTY)
    assert (state.kind, state.field, flags.field) == ("flags", "state", "flags")
    assert state.name(0x84) == "I_DIRTY_PAGES|I_SYNC"
    assert state.name(0x20080) == "I_SYNC|0x20000"  # trace-cmd: state=I_SYNC|0x20000
    assert state.name(0) == ""  # trace-cmd: state= flags=I_DIRTY_PAGES
    assert flags.name(0x800) == "0x800"


def test_a_multi_bit_name_takes_its_bits_first_and_zero_prints_the_ternary():
    (gfp,) = value_names(GFP)
    assert gfp.entries[0] == (0xCC0, "GFP_KERNEL")
    assert gfp.name(0xC42) == "GFP_NOFS|__GFP_HIGHMEM"  # 0x40 consumed by GFP_NOFS, no __GFP_IO
    assert gfp.name(0) == "none"
    assert gfp.skipped == ()  # the { 0, NULL } terminator is no entry


def test_symbols_compare_as_64_bit_values():
    (root,) = value_names(ROOT)
    assert root.kind == "symbolic" and root.field == "root_objectid"
    assert root.name(2**64 - 6) == "TREE_LOG"
    assert root.name(5) == "FS_TREE"
    assert root.name(7) == "0x7"


def test_an_unexpanded_constant_is_skipped_not_guessed():
    (t,) = value_names(UNEXPANDED)
    assert t.entries == ((4, "I_DIRTY_PAGES"),)
    assert t.skipped == ('{I_DIRTY_SYNC, "I_DIRTY_SYNC"}',)
    assert t.name(5) == "I_DIRTY_PAGES|0x1"


def test_a_call_inside_a_string_literal_is_text():
    assert value_names('"__print_flags(REC->x, \\"|\\", {1, \\"A\\"}) x=%d", REC->x') == []


def test_constants():
    assert constant("(1ULL << 63)") == 2**63
    assert constant("0x10u") == 16
    assert constant("010") == 8
    assert constant("-1") == 2**64 - 1
    assert constant("~0x1 & 0xff") == 0xFE
    assert constant("(unsigned long)-1") == 2**64 - 1
    assert constant("1 | 2 << 2") == 9  # C precedence: shift before or
    for not_constant in ("I_DIRTY_SYNC", "(I_NEW)", "(FOO) | 1", "1 +", "REC->x", ""):
        assert constant(not_constant) is None, not_constant
