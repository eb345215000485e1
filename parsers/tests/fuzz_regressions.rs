//! Every input a fuzz target ever failed on (parsers/fuzz/regressions/
//! <target>/), and the seed corpora, replayed through the same entry points
//! (advisor_parsers::fuzzing): each must now parse or fail cleanly. A crash
//! here is a panic; an allocation bomb shows as the test running out of
//! memory or time.

use std::path::Path;

fn replay(dir: &str, target: &str, run: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join(dir).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else { return 0 };
    let mut n = 0;
    for e in entries.flatten() {
        let data = std::fs::read(e.path()).unwrap();
        run(&data);
        n += 1;
    }
    n
}

fn all(dir: &str) -> usize {
    use advisor_parsers::fuzzing::*;
    let targets: [(&str, fn(&[u8])); 6] = [
        ("tracedat", tracedat),
        ("inflate", inflate),
        ("event_format", event_format),
        ("ftrace_text", ftrace_text),
        ("blktrace", blktrace),
        ("blkparse_text", blkparse_text),
    ];
    targets.iter().map(|(t, f)| replay(dir, t, *f)).sum()
}

#[test]
fn crashing_inputs_found_by_fuzzing_are_handled() {
    assert!(all("regressions") > 0);
}

#[test]
fn seed_corpora_parse() {
    assert!(all("corpus") >= 40);
}
