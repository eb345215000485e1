//! One line of ftrace text output, split into its columns.
//!
//! The kernel's `trace` / `trace_pipe` files and `trace-cmd report` print
//! events as
//!
//! ```text
//!        opt cgu.2-23770   (  23127) [001] ..s..  1357.541583: block_rq_complete: 7,0 RM () 33928 + 8 be,0,4 [0]
//!               dd-23956 [001]  1357.541435709: block_rq_issue:        dev=7340032 sector=33928 ...
//! ```
//!
//! i.e. `COMM-PID`, an optional `(TGID)` (`record-tgid` option; `(-------)`
//! when unknown), `[CPU]`, an optional irq-flags column (`irq-info`
//! option, or `trace-cmd report -l`), the timestamp, the event name, and the
//! event's printed fields. Task names may contain spaces and dashes, so the
//! line is anchored on the `[CPU]` column and the pid is the digits after
//! the last dash before it.

/// The columns of one event line, borrowed from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventLine<'a> {
    pub comm: &'a str,
    pub pid: i32,
    /// `Some(None)`: the tgid column is present but unknown (`-------`).
    pub tgid: Option<Option<i32>>,
    pub cpu: i32,
    pub flags: Option<&'a str>,
    /// Timestamp text before the colon, e.g. `1357.541583`.
    pub ts: &'a str,
    pub kind: EventKind<'a>,
}

/// How the event part of the line was printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind<'a> {
    /// `name: printed fields`
    Named { name: &'a str, info: &'a str },
    /// tracefs prints syscall entries as `sys_write(fd: 1, buf: 0x55..., count: 0x10000)`.
    SyscallEnter { call: &'a str, args: &'a str },
    /// ... and exits as `sys_write -> 0x10000`.
    SyscallExit { call: &'a str, ret: &'a str },
    /// Function tracer: `do_sys_open <-do_syscall_64`.
    Function { func: &'a str, parent: &'a str },
}

/// A lost-events marker: tracefs `CPU:1 [LOST 123 EVENTS]`, trace-cmd
/// `CPU:1 [123 EVENTS DROPPED]` or `CPU:1 [EVENTS DROPPED]` (count unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostLine {
    pub cpu: i32,
    pub count: Option<u64>,
}

pub fn parse_lost(line: &str) -> Option<LostLine> {
    let rest = line.trim().strip_prefix("CPU:")?;
    let (cpu, rest) = rest.split_once(' ')?;
    let cpu = cpu.trim().parse().ok()?;
    let inner = rest.trim().strip_prefix('[')?.strip_suffix(']')?;
    if let Some(n) = inner.strip_prefix("LOST ").and_then(|r| r.strip_suffix(" EVENTS")) {
        return Some(LostLine { cpu, count: n.trim().parse().ok() });
    }
    if inner == "EVENTS DROPPED" {
        return Some(LostLine { cpu, count: None });
    }
    let n = inner.strip_suffix(" EVENTS DROPPED")?;
    Some(LostLine { cpu, count: Some(n.trim().parse().ok()?) })
}

/// Find `[digits]` preceded by whitespace: the CPU column.
fn find_cpu(line: &str) -> Option<(usize, usize, i32)> {
    let b = line.as_bytes();
    let mut from = 0;
    while let Some(rel) = memchr::memchr(b'[', &b[from..]) {
        let open = from + rel;
        from = open + 1;
        if open == 0 || !b[open - 1].is_ascii_whitespace() {
            continue;
        }
        let digits = b[open + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let close = open + 1 + digits;
        if digits == 0 || close >= b.len() || b[close] != b']' {
            continue;
        }
        if let Ok(cpu) = line[open + 1..close].parse() {
            return Some((open, close, cpu));
        }
    }
    None
}

fn is_flag_char(c: u8) -> bool {
    c == b'.' || c.is_ascii_alphanumeric()
}

/// Parse an event line; `None` when the line is not one.
pub fn parse_event(line: &str) -> Option<EventLine<'_>> {
    let (open, close, cpu) = find_cpu(line)?;
    let mut head = line[..open].trim_end();
    // Optional "(  1234)" / "(-------)" tgid column.
    let mut tgid = None;
    if head.ends_with(')') {
        let p = head.rfind('(')?;
        let inner = head[p + 1..head.len() - 1].trim();
        tgid = Some(if inner.bytes().all(|c| c == b'-') { None } else { Some(inner.parse().ok()?) });
        head = head[..p].trim_end();
    }
    let head = head.trim_start();
    let dash = head.rfind('-')?;
    let pid: i32 = head[dash + 1..].parse().ok()?;
    let comm = &head[..dash];

    let mut rest = line[close + 1..].trim_start();
    // Optional flags column ("d..1." / "...." / "dNh2"), then the timestamp.
    let mut flags = None;
    let first_end = rest.find(char::is_whitespace)?;
    let first = &rest[..first_end];
    if !first.ends_with(':') && first.len() >= 4 && first.bytes().all(is_flag_char) {
        flags = Some(first);
        rest = rest[first_end..].trim_start();
    }
    let colon = rest.find(": ").or_else(|| rest.strip_suffix(':').map(|r| r.len()))?;
    let ts = &rest[..colon];
    if ts.is_empty() || !ts.bytes().all(|c| c.is_ascii_digit() || c == b'.') {
        return None;
    }
    let mut body = rest[colon + 1..].trim_start();
    // `trace-cmd report --ts-diff` puts the time since the previous event, in the
    // timestamp's unit, before the event name: "1357.541583: (+147)   block_rq_complete:".
    if let Some(after) = body.strip_prefix("(+").and_then(|b| b.split_once(')')) {
        if !after.0.is_empty() && after.0.bytes().all(|c| c.is_ascii_digit()) {
            body = after.1.trim_start();
        }
    }
    Some(EventLine { comm, pid, tgid, cpu, flags, ts, kind: classify(body)? })
}

/// The events `stacktrace` / `userstacktrace` add after each event, whose caller
/// lines follow on lines of their own (see text::stack_callers).
pub fn is_stack_event(name: &str) -> bool {
    matches!(name, "kernel_stack" | "user_stack")
}

fn classify(body: &str) -> Option<EventKind<'_>> {
    // The kernel's `trace` file prints a stack event without its name:
    // "<idle>-0 [000] d.h.   230.859993: <stack trace>" (ftrace:kernel_stack), and
    // "<user stack trace>" (ftrace:user_stack); trace-cmd names them.
    for (marker, name) in [("<stack trace", "kernel_stack"), ("<user stack trace", "user_stack")] {
        if body.starts_with(marker) {
            return Some(EventKind::Named { name, info: body.trim_end() });
        }
    }
    let end = body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(body.len());
    let name = &body[..end];
    if name.is_empty() {
        return None;
    }
    let after = &body[end..];
    if let Some(info) = after.strip_prefix(':') {
        return Some(EventKind::Named { name, info: info.trim_start().trim_end() });
    }
    if let Some(args) = after.strip_prefix('(') {
        if name.starts_with("sys_") {
            return Some(EventKind::SyscallEnter { call: name, args: args.trim_end().strip_suffix(')').unwrap_or(args) });
        }
    }
    if let Some(ret) = after.strip_prefix(" -> ") {
        if name.starts_with("sys_") {
            return Some(EventKind::SyscallExit { call: name, ret: ret.trim() });
        }
    }
    if let Some(parent) = after.strip_prefix(" <-") {
        return Some(EventKind::Function { func: name, parent: parent.trim() });
    }
    None
}

/// Timestamp text to nanoseconds, exactly (no floats): `1357.541583` is
/// microseconds, `1357.541435709` nanoseconds; a bare integer is clock ticks.
/// Returns (ns or ticks, digits after the point).
pub fn parse_ts(ts: &str) -> Option<(i64, usize)> {
    match ts.split_once('.') {
        None => Some((ts.parse().ok()?, 0)),
        Some((secs, frac)) => {
            if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            let s: i64 = secs.parse().ok()?;
            let f: i64 = frac.parse().ok()?;
            let scale = 10i64.pow(9 - frac.len() as u32);
            Some((s.checked_mul(1_000_000_000)?.checked_add(f * scale)?, frac.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracefs_with_tgid_and_flags() {
        let l =
            parse_event("       opt cgu.2-23770   (  23127) [001] ..s..  1357.541583: block_rq_complete: 7,0 RM () 33928 + 8 be,0,4 [0]")
                .unwrap();
        assert_eq!(l.comm, "opt cgu.2");
        assert_eq!(l.pid, 23770);
        assert_eq!(l.tgid, Some(Some(23127)));
        assert_eq!(l.cpu, 1);
        assert_eq!(l.flags, Some("..s.."));
        assert_eq!(l.ts, "1357.541583");
        assert_eq!(l.kind, EventKind::Named { name: "block_rq_complete", info: "7,0 RM () 33928 + 8 be,0,4 [0]" });
    }

    #[test]
    fn report_with_ts_diff() {
        let l = parse_event("       opt cgu.2-23770 [001]  1357.541583: (+147)   block_rq_complete:    7,0 RM () 33928 + 8 0x2,0,4 [0]")
            .unwrap();
        assert_eq!((l.pid, l.cpu, l.ts), (23770, 1, "1357.541583"));
        assert_eq!(l.kind, EventKind::Named { name: "block_rq_complete", info: "7,0 RM () 33928 + 8 0x2,0,4 [0]" });
        // Not a difference: left to the event name's check.
        assert!(parse_event("dd-1 [001] 1.000001: (+x) a: b").is_none());
    }

    #[test]
    fn stack_events_with_and_without_their_name() {
        let l = parse_event("          <idle>-0     [000] d.h.   230.859993: <stack trace>").unwrap();
        assert_eq!(l.kind, EventKind::Named { name: "kernel_stack", info: "<stack trace>" });
        let l = parse_event("              dd-7 [000] .....   230.859993: <user stack trace>").unwrap();
        assert_eq!(l.kind, EventKind::Named { name: "user_stack", info: "<user stack trace>" });
        let l = parse_event("             seq-18403 [001]  2282.926679: kernel_stack:         <stack trace >").unwrap();
        assert_eq!(l.kind, EventKind::Named { name: "kernel_stack", info: "<stack trace >" });
        // The caller lines are not events.
        assert!(parse_event(" => tick_sched_timer").is_none());
    }

    #[test]
    fn report_without_flags() {
        let l = parse_event("              dd-23956 [001]  1357.541435709: block_rq_issue:        dev=7340032 sector=33928").unwrap();
        assert_eq!((l.pid, l.cpu, l.flags, l.ts), (23956, 1, None, "1357.541435709"));
        assert_eq!(l.tgid, None);
        let l = parse_event("           <...>-1234    (-------) [000] d..1.   12.000001: x: y").unwrap();
        assert_eq!((l.comm, l.tgid), ("<...>", Some(None)));
    }

    #[test]
    fn syscalls_and_functions() {
        let l = parse_event("dd-1 [001] .....  1.5: sys_write(fd: 1, buf: 0x56, count: 0x10000)").unwrap();
        assert_eq!(l.kind, EventKind::SyscallEnter { call: "sys_write", args: "fd: 1, buf: 0x56, count: 0x10000" });
        let l = parse_event("dd-1 [001] .....  1.5: sys_write -> 0x10000").unwrap();
        assert_eq!(l.kind, EventKind::SyscallExit { call: "sys_write", ret: "0x10000" });
        let l = parse_event("bash-1 [000] ....  2.0: do_sys_open <-do_syscall_64").unwrap();
        assert_eq!(l.kind, EventKind::Function { func: "do_sys_open", parent: "do_syscall_64" });
    }

    #[test]
    fn not_events() {
        assert!(parse_event("# tracer: nop").is_none());
        assert!(parse_event("cpus=2").is_none());
        assert!(parse_event("hello [1] world").is_none());
    }

    #[test]
    fn lost_markers() {
        assert_eq!(parse_lost("CPU:1 [LOST 123 EVENTS]"), Some(LostLine { cpu: 1, count: Some(123) }));
        assert_eq!(parse_lost("CPU:0 [4 EVENTS DROPPED]"), Some(LostLine { cpu: 0, count: Some(4) }));
        assert_eq!(parse_lost("CPU:3 [EVENTS DROPPED]"), Some(LostLine { cpu: 3, count: None }));
        assert_eq!(parse_lost("CPU:3 hello"), None);
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_ts("1357.541583"), Some((1_357_541_583_000, 6)));
        assert_eq!(parse_ts("1357.541435709"), Some((1_357_541_435_709, 9)));
        assert_eq!(parse_ts("12345"), Some((12345, 0)));
        assert_eq!(parse_ts("1.2.3"), None);
    }
}
