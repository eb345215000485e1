//! ftrace text layouts that carry no task, CPU or nanosecond timestamp per event,
//! recognised so that the error names the trace option that printed them.

/// The trace_options setting behind a line this reader cannot take, with what to
/// set instead; None for any other line.
pub fn unreadable_layout(line: &str) -> Option<&'static str> {
    let words: Vec<&str> = line.split_whitespace().take(4).collect();
    let digits = |w: &str, radix: u32| !w.is_empty() && w.chars().all(|c| c.is_digit(radix));
    // latency-format: "kworker/-44        1..... 22407us#: block_rq_issue: ..." (the
    // task name cut to 8 bytes; CPU and flags; microseconds since the trace began, then
    // a delay mark, which is a space for short delays: "23722us : ").
    if let [task, cpu_flags, time, rest @ ..] = &words[..] {
        let time_us = time.trim_end_matches(':').trim_end_matches(['!', '#', '$', '%', '*', '@', '+']);
        if task.contains('-')
            && cpu_flags.starts_with(|c: char| c.is_ascii_digit())
            && time_us.strip_suffix("us").is_some_and(|n| digits(n, 10))
            && (time.ends_with(':') || rest.first() == Some(&":"))
        {
            return Some("latency-format output (trace_options latency-format: microseconds since the trace began, task names cut to 8 bytes); save the trace with nolatency-format, or record it with trace-cmd");
        }
    }
    // `trace-cmd report -l`: "      dd-23956   1.....  1357.541436: block_rq_issue: ..."
    // (the task name cut to 8 bytes, the CPU and the latency flags without brackets).
    if let [task, cpu_flags, time, ..] = &words[..] {
        let secs = time.strip_suffix(':').and_then(|t| t.split_once('.'));
        if task.contains('-')
            && cpu_flags.len() >= 2
            && cpu_flags.starts_with(|c: char| c.is_ascii_digit())
            && cpu_flags.trim_start_matches(|c: char| c.is_ascii_digit()).chars().all(|c| c == '.' || c.is_ascii_alphanumeric())
            && secs.is_some_and(|(s, f)| digits(s, 10) && digits(f, 10))
        {
            return Some("`trace-cmd report -l` output (latency format: task names cut to 8 bytes); print the report without -l, or give the trace.dat itself");
        }
    }
    // raw: "44 1 16613519959038 type: 2104"; hex: "0000002c 00000001 00000f1c26bc1baa type: 2104".
    if let [pid, cpu, ts, "type:"] = words[..] {
        if [pid, cpu, ts].iter().all(|w| digits(w, 16)) {
            return Some("raw or hex output (trace_options raw, hex): no event fields; save the trace with noraw and nohex, or record it with trace-cmd");
        }
    }
    // nocontext-info: "block_rq_issue: 254,0 DS 4194304 () 38502400 + 8192 ..."
    if let Some(first) = words.first() {
        let name = first.strip_suffix(':').unwrap_or("");
        if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Some("no task, CPU or time on the line (trace_options nocontext-info), so no event can be placed in time; save the trace with context-info");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::unreadable_layout;

    #[test]
    fn names_the_option_behind_each_layout() {
        let lat = "kworker/-44        1..... 22407us#: block_rq_issue: 254,0 DS 4194304 () 38502400 + 8192 be,0,4 [kworker/1:1H]";
        assert!(unreadable_layout(lat).unwrap().starts_with("latency-format"));
        assert!(unreadable_layout("  <idle>-0         1..s1. 23706us+: block_rq_complete: 254,0 DS () 38502400 + 8192")
            .unwrap()
            .starts_with("latency-format"));
        let short_delay = "      dd-13961     1..... 23722us : writeback_mark_inode_dirty: bdi 254:0: ino=395564 state= flags=I_DIRTY_SYNC";
        assert!(unreadable_layout(short_delay).unwrap().starts_with("latency-format"));
        assert!(unreadable_layout("44 1 16613519959038 type: 2104").unwrap().starts_with("raw or hex"));
        assert!(unreadable_layout("0000002c 00000001 00000f1c26bc1baa type: 2104").unwrap().starts_with("raw or hex"));
        assert!(unreadable_layout("block_rq_issue: 254,0 DS 4194304 () 38502400 + 8192").unwrap().contains("nocontext-info"));
        let report_l = "      dd-23956   1.....  1357.541436: block_rq_issue:       7,0 RM 4096 () 33928 + 8 0x2,0,4 [dd]";
        assert!(unreadable_layout(report_l).unwrap().contains("trace-cmd report -l"));
        // An ordinary event line, and noise, are not one of these layouts.
        assert_eq!(unreadable_layout("  dd-6375  [000] ..... 15672.265470: block_dirty_buffer: dev=266338304"), None);
        assert_eq!(unreadable_layout("garbage here"), None);
    }
}
