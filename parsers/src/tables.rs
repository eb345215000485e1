//! Table names and the common columns shared by every event table.
//!
//! Each event type becomes a table named after the event
//! (`writeback_dirty_folio`). When two systems define the same event name, or
//! the name is one of the store's own tables, the table is named
//! `<system>_<event>` instead. Every event table starts with the common
//! columns below; when an event has a field of the same name (`sched_wakeup`
//! has `comm` and `pid`, many btrfs events have `flags`), the field keeps the
//! name and the common column becomes `common_<name>`.

use std::collections::{HashMap, HashSet};

/// Names the store uses for its own tables and views.
pub const RESERVED: &[&str] = &[
    "events",
    "trace_info",
    "parse_stats",
    "lost_events",
    "event_formats",
    "unknown_events",
    "blk_events",
    "io_requests",
    "sync_ops",
    "fsync_ops",
    "snapshot_ops",
    "dirtying",
    "writeback_passes",
    "flush_space",
    "tasks",
    "syscall_spans",
    "printk_strings",
    "kallsyms",
    "instance_events",
];

/// The common columns, in order.
pub const COMMON: &[&str] = &["id", "ts", "cpu", "pid", "tgid", "comm", "flags", "preempt_count"];

/// Pick a table name for each (system, event).
pub fn table_names(events: &[(String, String)]) -> Vec<String> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (_, e) in events {
        *count.entry(e.as_str()).or_default() += 1;
    }
    let mut used = HashSet::new();
    events
        .iter()
        .map(|(s, e)| {
            let plain = sanitize(e);
            let name = if count[e.as_str()] > 1 || RESERVED.contains(&plain.as_str()) || used.contains(&plain) {
                sanitize(&format!("{s}_{e}"))
            } else {
                plain
            };
            let mut unique = name.clone();
            let mut n = 2;
            while !used.insert(unique.clone()) {
                unique = format!("{name}_{n}");
                n += 1;
            }
            unique
        })
        .collect()
}

/// Lower-case identifier characters only (event names already are; this
/// guards SQL identifiers against odd input).
pub fn sanitize(s: &str) -> String {
    let mut out: String = s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c.to_ascii_lowercase() } else { '_' }).collect();
    if out.is_empty() || out.as_bytes()[0].is_ascii_digit() {
        out.insert(0, '_');
    }
    out
}

/// The names the common columns take in a table whose event fields are `fields`.
pub fn common_names(fields: &HashSet<String>) -> Vec<String> {
    COMMON
        .iter()
        .map(|c| {
            let mut name = c.to_string();
            while fields.contains(&name) {
                name = format!("common_{name}");
            }
            name
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        let ev = |s: &str, e: &str| (s.to_string(), e.to_string());
        let n = table_names(&[
            ev("writeback", "writeback_dirty_folio"),
            ev("a", "dup"),
            ev("b", "dup"),
            ev("x", "events"),
            ev("y", "weird-name"),
        ]);
        assert_eq!(n, vec!["writeback_dirty_folio", "a_dup", "b_dup", "x_events", "weird_name"]);
    }

    #[test]
    fn common_columns_give_way() {
        let f: HashSet<String> = ["comm", "pid", "prio"].iter().map(|s| s.to_string()).collect();
        let c = common_names(&f);
        assert_eq!(c[3], "common_pid");
        assert_eq!(c[5], "common_comm");
        assert_eq!(c[1], "ts");
    }
}
