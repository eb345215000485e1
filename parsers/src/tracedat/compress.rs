//! Decompression of trace.dat v7 sections and flyrecord chunks.
//!
//! trace-cmd compresses with whole-buffer calls: zlib's `compress2` (a zlib
//! stream with header, RFC 1950) or a zstd frame. Each block states its
//! compressed and uncompressed sizes. Neither is trusted: a block may claim
//! at most [`MAX_BLOCK`] bytes (a decompression bomb stops there), a zstd
//! frame must state the same size in its own header before anything is
//! allocated, zlib output grows only as data really comes out, and the
//! output must match the stated size exactly.

use std::io::Read;

/// Largest uncompressed block we accept (64 MiB). trace-cmd compresses
/// flyrecord data in chunks of 10 pages (40 KiB with 4 KiB pages) and the
/// metadata sections we inflate are small (event formats: tens of KiB; the
/// 5 MB kallsyms is never inflated); anything claiming more is corrupt or
/// hostile. Documented in README.md ("Hostile input").
pub const MAX_BLOCK: u32 = 64 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    Zlib,
    Zstd,
}

impl Codec {
    pub fn from_name(name: &str) -> Option<Codec> {
        match name {
            "zlib" => Some(Codec::Zlib),
            "zstd" => Some(Codec::Zstd),
            _ => None,
        }
    }

    /// Decompress one block (see [`Inflater::inflate`]).
    pub fn decompress_into(self, input: &[u8], expected: u32, out: &mut Vec<u8>) -> Result<(), String> {
        Inflater::new(self).inflate(input, expected, out)
    }
}

/// A codec with its reusable decompression context (one per CPU stream, so
/// the zstd context is not rebuilt for every chunk).
pub struct Inflater {
    codec: Codec,
    blocks: Decompressor,
    /// Bytes taken in and given out so far (see [`MAX_RATIO`]).
    read: u64,
    given: u64,
}

/// The decompression itself, with its reusable zstd context: what
/// [`Inflater::inflate`] does once [`Inflater::admit`] let a block through. A
/// chunk inflated ahead on another thread (`prefetch.rs`) goes through the
/// same call there, after the same sizes were checked.
#[derive(Default)]
pub struct Decompressor {
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

/// What all the blocks one inflater handles (one CPU's chunks, or a file's
/// metadata sections) may inflate to: 64 MiB plus 1024 times their
/// compressed size. Trace pages compress 3 to 30 times; a file of thousands
/// of tiny bombs, each within [`MAX_BLOCK`], would otherwise keep us
/// inflating zeros for hours.
pub const MAX_RATIO: u64 = 1024;

impl Inflater {
    pub fn new(codec: Codec) -> Self {
        Inflater { codec, blocks: Decompressor::default(), read: 0, given: 0 }
    }

    /// Decompress `input` into `out` (cleared first), expecting exactly
    /// `expected` bytes. `out` never grows past `expected` (+1 for zlib).
    pub fn inflate(&mut self, input: &[u8], expected: u32, out: &mut Vec<u8>) -> Result<(), String> {
        self.admit(input.len(), expected)?;
        self.blocks.decompress(self.codec, input, expected, out)
    }

    pub fn codec(&self) -> Codec {
        self.codec
    }

    /// Decompress a block [`Inflater::admit`] already let through.
    pub fn decompress_admitted(&mut self, input: &[u8], expected: u32, out: &mut Vec<u8>) -> Result<(), String> {
        self.blocks.decompress(self.codec, input, expected, out)
    }

    /// Count a block of `input_len` bytes claiming `expected` against the limits
    /// ([`MAX_BLOCK`], [`MAX_RATIO`]); an error when it may not be inflated.
    pub fn admit(&mut self, input_len: usize, expected: u32) -> Result<(), String> {
        if expected > MAX_BLOCK {
            return Err(format!("compressed block claims {expected} uncompressed bytes (limit {MAX_BLOCK})"));
        }
        self.read += input_len as u64;
        let allowed = (MAX_BLOCK as u64).saturating_add(self.read.saturating_mul(MAX_RATIO));
        if self.given + expected as u64 > allowed {
            return Err(format!(
                "compressed blocks would inflate to {} bytes from {} (more than {MAX_RATIO} times, beyond {} MiB)",
                self.given + expected as u64,
                self.read,
                MAX_BLOCK >> 20
            ));
        }
        self.given += expected as u64;
        Ok(())
    }
}

impl Decompressor {
    /// Decompress `input` into `out` (cleared first), expecting exactly
    /// `expected` bytes (at most [`MAX_BLOCK`]: see [`Inflater::admit`]). `out`
    /// never grows past `expected` (+1 for zlib).
    pub fn decompress(&mut self, codec: Codec, input: &[u8], expected: u32, out: &mut Vec<u8>) -> Result<(), String> {
        if expected > MAX_BLOCK {
            return Err(format!("compressed block claims {expected} uncompressed bytes (limit {MAX_BLOCK})"));
        }
        out.clear();
        let got = match codec {
            Codec::Zlib => {
                // zlib cannot say how much a stream will give, and inflates at
                // most ~1032:1: reserve no more than that, let the vector grow
                // with the real output, and read at most one byte more than
                // promised, to detect a block that inflates beyond its stated
                // size without buffering a bomb.
                let bound = (input.len() as u64).saturating_mul(1032).saturating_add(64);
                out.reserve_exact((expected as u64 + 1).min(bound) as usize);
                flate2::read::ZlibDecoder::new(input)
                    .take(expected as u64 + 1)
                    .read_to_end(out)
                    .map_err(|e| format!("cannot decompress zlib block: {e}"))?
            }
            Codec::Zstd => {
                // A frame that states its content size must agree with the
                // block header before we allocate for it.
                match zstd::zstd_safe::get_frame_content_size(input) {
                    Ok(Some(n)) if n == expected as u64 => {}
                    Ok(Some(n)) => return Err(format!("zstd frame says {n} bytes, block header says {expected}")),
                    // trace-cmd's frames leave the size out: the buffer is then
                    // sized from the block header, already held to MAX_BLOCK
                    // here and, for CPU data, to that CPU's budget (cpu.rs);
                    // the pages are only touched as data comes out.
                    Ok(None) => {}
                    Err(_) => return Err(format!("not a zstd frame ({} bytes)", input.len())),
                }
                out.reserve_exact(expected as usize);
                // Decompresses into the spare capacity only: a frame that
                // would inflate further is an error, not an allocation.
                let ctx = match &mut self.zstd {
                    Some(c) => c,
                    None => self.zstd.insert(zstd::bulk::Decompressor::new().map_err(|e| format!("cannot set up zstd: {e}"))?),
                };
                ctx.decompress_to_buffer(input, out)
                    .map_err(|e| format!("cannot decompress zstd block of {} bytes into {expected}: {e}", input.len()))?
            }
        };
        check_size(got, expected)
    }
}

fn check_size(got: usize, expected: u32) -> Result<(), String> {
    match got as u64 {
        n if n == expected as u64 => Ok(()),
        n if n > expected as u64 => Err(format!("compressed block inflates beyond its stated size of {expected} bytes")),
        n => Err(format!("compressed block gave {n} bytes, header says {expected}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn many_small_bombs_stop_at_the_ratio() {
        let z = zstd::bulk::compress(&vec![0u8; 8 << 20], 19).unwrap();
        let mut inf = Inflater::new(Codec::Zstd);
        let mut out = Vec::new();
        let mut n = 0;
        while inf.inflate(&z, 8 << 20, &mut out).is_ok() {
            n += 1;
            assert!(n < 100);
        }
        assert!(n >= 8, "{n}");
    }

    #[test]
    fn roundtrip_both() {
        let data: Vec<u8> = (0..10000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut out = Vec::new();
        Codec::Zlib.decompress_into(&zlib(&data), data.len() as u32, &mut out).unwrap();
        assert_eq!(out, data);
        let z = zstd::bulk::compress(&data, 3).unwrap();
        Codec::Zstd.decompress_into(&z, data.len() as u32, &mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn size_lies_are_errors() {
        let data = vec![7u8; 5000];
        let mut out = Vec::new();
        let z = zstd::bulk::compress(&data, 3).unwrap();
        assert!(Codec::Zstd.decompress_into(&z, 100, &mut out).is_err());
        assert!(out.len() <= 101);
        assert!(Codec::Zstd.decompress_into(&z, 6000, &mut out).is_err());
        assert!(Codec::Zlib.decompress_into(b"garbage", 10, &mut out).is_err());
        assert!(Codec::Zstd.decompress_into(&z, MAX_BLOCK + 1, &mut out).is_err());
    }

    /// Found by the `inflate` fuzz target: 5 bytes of zlib claiming 256 MiB
    /// made us reserve the claim before reading anything.
    #[test]
    fn a_claimed_size_is_not_an_allocation() {
        let mut out = Vec::new();
        assert!(Codec::Zlib.decompress_into(b"", MAX_BLOCK, &mut out).is_err());
        assert!(out.capacity() < 1 << 20);
        // A frame stating its size must agree before anything is reserved.
        let z = zstd::bulk::compress(&[1u8; 5000], 3).unwrap();
        let mut out = Vec::new();
        assert!(Codec::Zstd.decompress_into(&z, MAX_BLOCK, &mut out).is_err());
        assert_eq!(out.capacity(), 0);
        crate::fuzzing::inflate(&[0, 0, 0, 0, 0x10]);
    }

    /// A bomb: a zstd frame of a few KiB that really inflates to 65 MiB.
    #[test]
    fn bomb_stops_at_the_limit() {
        let big = vec![0u8; (MAX_BLOCK as usize) + 4096];
        let z = zstd::bulk::compress(&big, 19).unwrap();
        assert!(z.len() < 64 << 10);
        let mut out = Vec::new();
        let e = Codec::Zstd.decompress_into(&z, big.len() as u32, &mut out).unwrap_err();
        assert!(e.contains("limit"), "{e}");
        assert!(out.capacity() == 0);
    }
}
