//! blktrace captures to Arrow batches: per-CPU files (`NAME.blktrace.N`, as
//! blkparse reads them), a merged file (`blkparse -d` output) or a stream
//! on stdin (`blktrace -o - | advisor ingest -`).
//!
//! Records come out in blkparse's order (its merge of per-CPU streams; its
//! pipe-mode batches for stdin, pipe.rs; file order for a merged file, which
//! blkparse wrote sorted) into `blk_events`; the same order drives the
//! btt-compatible request tracker (btt.rs) that fills `io_requests` and
//! `io_phases`.

pub mod action;
pub mod btt;
mod pipe;
pub mod record;
mod run;
mod sector_tree;
pub mod stream;
pub mod summary;
mod tables;
pub mod text;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::error::{ParseError, Result};
use crate::source::{Limits, TraceSource};
use crate::stats::{Severity, Stat};
use crate::tracedat::decode::TableSpec;
use crate::tracedat::RunReport;
use pipe::PipeSort;
use run::Run;
use stream::{CpuStream, Merge, Reader};

/// Where the records come from.
pub enum Input {
    /// Per-CPU files of one or more traced devices: (device set name, cpu, path).
    PerCpu(Vec<(String, u32, PathBuf)>),
    /// One file (or stdin) holding every CPU's records.
    Single { name: String, path: Option<PathBuf> },
    /// Bytes in memory (fuzz targets, tests): one buffer is a merged file
    /// (`stream`: a `blktrace -o -` stream), several are per-CPU files.
    Memory { name: String, cpus: Vec<Vec<u8>>, stream: bool },
}

pub struct BlkTrace {
    input: Input,
    total_bytes: u64,
    names: Vec<String>,
}

/// `NAME.blktrace.N` → (NAME, N).
pub fn split_cpu_file(p: &Path) -> Option<(PathBuf, u32)> {
    let s = p.to_str()?;
    let at = s.rfind(".blktrace.")?;
    let cpu = s[at + ".blktrace.".len()..].parse().ok()?;
    Some((PathBuf::from(&s[..at]), cpu))
}

/// The per-CPU files of a device set named `base`: every existing
/// `base.blktrace.N`, by CPU.
pub fn cpu_files(base: &Path) -> Vec<(u32, PathBuf)> {
    let dir = base.parent().filter(|d| !d.as_os_str().is_empty());
    let Some(stem) = base.file_name().and_then(|n| n.to_str()) else { return Vec::new() };
    let prefix = format!("{stem}.blktrace.");
    let mut out: Vec<(u32, PathBuf)> = std::fs::read_dir(dir.unwrap_or(Path::new(".")))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let cpu = name.to_str()?.strip_prefix(&prefix)?.parse().ok()?;
            Some((cpu, dir.map_or_else(|| PathBuf::from(&name), |d| d.join(&name))))
        })
        .collect();
    out.sort();
    out
}

/// blktrace writes one file per CPU, empty ones included: a gap in the
/// numbering is a lost file (blkparse would silently stop reading there).
fn check_no_gaps(base: &Path, files: &[(u32, PathBuf)]) -> Result<()> {
    for (i, (cpu, _)) in files.iter().enumerate() {
        if *cpu != i as u32 {
            let missing = PathBuf::from(format!("{}.blktrace.{i}", base.display()));
            return Err(ParseError::Io {
                path: missing,
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("per-CPU file missing (CPU {i}; the set goes up to CPU {})", files.last().map_or(0, |f| f.0)),
                ),
            });
        }
    }
    Ok(())
}

fn open_file(p: &Path) -> Result<std::fs::File> {
    std::fs::File::open(p).map_err(|source| ParseError::Io { path: p.to_path_buf(), source })
}

impl BlkTrace {
    /// Open a blktrace input: `-` (stdin), a device set name or one of its
    /// `NAME.blktrace.N` files, or a merged file.
    pub fn open(arg: &Path) -> Result<BlkTrace> {
        if arg.as_os_str() == "-" {
            return Ok(BlkTrace { input: Input::Single { name: "stdin".into(), path: None }, total_bytes: 0, names: vec!["stdin".into()] });
        }
        let base = match split_cpu_file(arg) {
            Some((base, _)) => Some(base),
            None if !arg.exists() && !cpu_files(arg).is_empty() => Some(arg.to_path_buf()),
            None => None,
        };
        if let Some(base) = base {
            let files = cpu_files(&base);
            check_no_gaps(&base, &files)?;
            if files.is_empty() {
                return Err(ParseError::Io {
                    path: arg.to_path_buf(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        format!("no per-CPU files {}.blktrace.0 ...", base.display()),
                    ),
                });
            }
            let name = base.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let total = files.iter().filter_map(|(_, p)| p.metadata().ok()).map(|m| m.len()).sum();
            return Ok(BlkTrace {
                input: Input::PerCpu(files.into_iter().map(|(c, p)| (name.clone(), c, p)).collect()),
                total_bytes: total,
                names: vec![name],
            });
        }
        let f = open_file(arg)?;
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let name = arg.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(BlkTrace { input: Input::Single { name: name.clone(), path: Some(arg.to_path_buf()) }, total_bytes: len, names: vec![name] })
    }

    /// blktrace data held in memory (see [`Input::Memory`]).
    pub fn from_memory(name: &str, cpus: Vec<Vec<u8>>, stream: bool) -> BlkTrace {
        let total_bytes = cpus.iter().map(|c| c.len() as u64).sum();
        BlkTrace { input: Input::Memory { name: name.to_string(), cpus, stream }, total_bytes, names: vec![name.to_string()] }
    }

    /// Several device sets parsed together (`blkparse -i a -i b`).
    pub fn open_many(args: &[PathBuf]) -> Result<BlkTrace> {
        let mut files = Vec::new();
        let mut names = Vec::new();
        let mut total = 0;
        let mut seen = std::collections::HashSet::new();
        for a in args {
            let one = BlkTrace::open(a)?;
            match one.input {
                Input::PerCpu(f) => {
                    if seen.insert(one.names[0].clone()) {
                        files.extend(f);
                        names.extend(one.names);
                        total += one.total_bytes;
                    }
                }
                Input::Single { .. } | Input::Memory { .. } if args.len() == 1 => return Ok(one),
                Input::Single { .. } | Input::Memory { .. } => {
                    return Err(ParseError::Unsupported {
                        path: a.clone(),
                        reason: "a merged blktrace file or stdin must be ingested on its own".into(),
                    })
                }
            }
        }
        Ok(BlkTrace { input: Input::PerCpu(files), total_bytes: total, names })
    }
}

impl TraceSource for BlkTrace {
    fn format(&self) -> &'static str {
        "blktrace"
    }

    fn info(&self) -> Vec<(String, String)> {
        let mut v = vec![(
            "blktrace_format".to_string(),
            match &self.input {
                Input::PerCpu(_) => "per-CPU files".to_string(),
                Input::Single { path: None, .. } => "stream on stdin".to_string(),
                Input::Single { .. } => "merged file".to_string(),
                Input::Memory { .. } => "in memory".to_string(),
            },
        )];
        v.push(("blktrace_inputs".into(), self.names.join(",")));
        v
    }

    fn specs(&self) -> Vec<TableSpec> {
        Vec::new()
    }

    fn side_tables(&self) -> Vec<(&'static str, SchemaRef)> {
        tables::side_tables()
    }

    fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    fn run(self: Box<Self>, limits: Limits, progress: &AtomicU64, out: &mut dyn FnMut(&str, RecordBatch)) -> RunReport {
        self.read_into(Run::new(limits, out), progress)
    }
}

impl BlkTrace {
    /// Read every record into `summary` (`advisor io`'s figures) and build no
    /// table; the report is the one an ingest of the same input gives.
    pub fn summarize(self, progress: &AtomicU64, summary: &mut summary::Summary) -> RunReport {
        let mut nothing = |_: &str, _: RecordBatch| {};
        // One-row batches: the table builders, unused here, reserve nothing.
        let limits = Limits { batch_rows: 1, ..Limits::default() };
        self.read_into(Run::summarize(limits, &mut nothing, summary), progress)
    }

    fn read_into(self, mut run: Run, progress: &AtomicU64) -> RunReport {
        let mut damage = Vec::new();
        let mut stats = Vec::new();
        let mut truncated = 0u64;
        let mut info = Vec::new();
        let memory_reader = |name: &str, data: Vec<u8>| Reader::new(name.to_string(), Box::new(std::io::Cursor::new(data)));
        match self.input {
            Input::PerCpu(files) => {
                let mut streams = Vec::new();
                for (name, cpu, path) in &files {
                    match open_file(path) {
                        Ok(f) => streams.push(CpuStream::new(
                            Reader::new(path.display().to_string(), Box::new(std::io::BufReader::with_capacity(1 << 20, f))),
                            *cpu,
                        )),
                        Err(e) => damage.push(format!("{name}: {e}")),
                    }
                }
                per_cpu(streams, &mut run, progress, &mut damage, &mut stats, &mut truncated);
            }
            Input::Memory { name, cpus, .. } if cpus.len() > 1 => {
                let streams = cpus
                    .into_iter()
                    .enumerate()
                    .map(|(i, d)| CpuStream::new(memory_reader(&format!("{name}.blktrace.{i}"), d), i as u32))
                    .collect();
                per_cpu(streams, &mut run, progress, &mut damage, &mut stats, &mut truncated);
            }
            Input::Memory { name, mut cpus, stream } => {
                let reader = memory_reader(&name, cpus.pop().unwrap_or_default());
                single(reader, stream, &mut run, progress, &mut damage, &mut stats, &mut truncated, &mut info);
            }
            Input::Single { name, path } => {
                let src: Box<dyn std::io::BufRead + Send> = match &path {
                    Some(p) => match open_file(p) {
                        Ok(f) => Box::new(std::io::BufReader::with_capacity(1 << 20, f)),
                        Err(e) => {
                            damage.push(e.to_string());
                            Box::new(std::io::empty())
                        }
                    },
                    None => Box::new(std::io::BufReader::with_capacity(1 << 20, std::io::stdin())),
                };
                single(Reader::new(name, src), path.is_none(), &mut run, progress, &mut damage, &mut stats, &mut truncated, &mut info);
            }
        }
        progress.store(self.total_bytes, Ordering::Relaxed);
        stats.push(Stat::new(
            "blk_truncated_bytes",
            None,
            Severity::Error,
            truncated,
            "bytes of a partial record at the end of an input (dropped)",
        ));
        run.finish(stats, damage, info)
    }
}

/// Merge per-CPU streams in blkparse's order into `run`.
fn per_cpu(
    streams: Vec<CpuStream>,
    run: &mut Run,
    progress: &AtomicU64,
    damage: &mut Vec<String>,
    stats: &mut Vec<Stat>,
    truncated: &mut u64,
) {
    let mut merge = Merge::new(streams, &mut run.notes);
    let mut n = 0u64;
    while let Some((_, r)) = merge.next(&mut run.notes) {
        run.emit(r, None);
        n += 1;
        if n % 8192 == 0 {
            progress.store(merge.streams.iter().map(|s| s.reader.offset).sum(), Ordering::Relaxed);
        }
    }
    for s in &merge.streams {
        damage.extend(s.reader.damage_line());
        *truncated += s.reader.truncated_bytes;
        if s.wrong_cpu > 0 {
            stats.push(Stat::new(
                "records_on_wrong_cpu",
                Some(s.cpu as i32),
                Severity::Error,
                s.wrong_cpu,
                "records whose cpu field does not match their per-CPU file (skipped, as blkparse does)",
            ));
        }
    }
}

/// One reader holding every CPU's records: a merged file, or (`stream`) a
/// `blktrace -o -` stream.
#[allow(clippy::too_many_arguments)]
fn single(
    mut reader: Reader,
    stream: bool,
    run: &mut Run,
    progress: &AtomicU64,
    damage: &mut Vec<String>,
    stats: &mut Vec<Stat>,
    truncated: &mut u64,
    info: &mut Vec<(String, String)>,
) {
    // A merged file is already in blkparse's order: keep it (btt
    // reads it as is). A stream from `blktrace -o -` interleaves
    // CPU buffers: order it the way `blkparse -i -` does.
    let mut pipe = stream.then(PipeSort::default);
    let mut first_time = None;
    let mut n = 0u64;
    while let Some(r) = reader.next() {
        if action::is_notify(r.h.action) && action::code(r.h.action) != action::tn::MESSAGE {
            run.notes.take(&r, reader.endian.unwrap_or(crate::bytes::Endian::Little));
            continue;
        }
        if !action::is_notify(r.h.action) {
            first_time.get_or_insert(r.h.time);
        }
        n += 1;
        if n % 8192 == 0 {
            progress.store(reader.offset, Ordering::Relaxed);
        }
        match pipe.as_mut() {
            Some(p) => p.push(r, &mut |r| run.emit(r, None)),
            None => run.emit(r, None),
        }
    }
    if let Some(p) = pipe.as_mut() {
        p.finish(&mut |r| run.emit(r, None));
        if p.forced_out > 0 {
            stats.push(Stat::new(
                "blk_pipe_reordered",
                None,
                Severity::Info,
                p.forced_out,
                "records released ahead of blkparse's order (a sequence hole held over a million records back)",
            ));
        }
    }
    damage.extend(reader.damage_line());
    *truncated += reader.truncated_bytes;
    if first_time == Some(0) {
        // blkparse -d subtracts the first record's time from every
        // record it dumps (notify records keep the absolute time).
        info.push(("blktrace_ts_origin".into(), "the first record (blkparse -d writes times relative to it)".into()));
    }
}
