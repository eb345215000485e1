//! Decompression of trace.dat v7 sections and flyrecord chunks.
//!
//! trace-cmd compresses with whole-buffer calls: zlib's `compress2` (a zlib
//! stream with header, RFC 1950) or a zstd frame. Each block states its
//! compressed and uncompressed sizes; we never trust the uncompressed size
//! for allocation beyond [`MAX_BLOCK`], and check the output matches it.

use std::io::Read;

/// Largest uncompressed block we accept. trace-cmd compresses flyrecord data
/// in chunks of a few pages and metadata sections are small (kallsyms, a few
/// MB, is the largest); anything claiming more is corrupt or hostile.
pub const MAX_BLOCK: u32 = 256 << 20;

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
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

impl Inflater {
    pub fn new(codec: Codec) -> Self {
        Inflater { codec, zstd: None }
    }

    /// Decompress `input` into `out` (cleared first), expecting exactly
    /// `expected` bytes. `out` never grows past `expected` (+1 for zlib).
    pub fn inflate(&mut self, input: &[u8], expected: u32, out: &mut Vec<u8>) -> Result<(), String> {
        if expected > MAX_BLOCK {
            return Err(format!("compressed block claims {expected} uncompressed bytes (limit {MAX_BLOCK})"));
        }
        out.clear();
        let got = match self.codec {
            Codec::Zlib => {
                out.reserve_exact(expected as usize + 1);
                // Read at most one byte more than promised, to detect a block
                // that inflates beyond its stated size without buffering a bomb.
                flate2::read::ZlibDecoder::new(input)
                    .take(expected as u64 + 1)
                    .read_to_end(out)
                    .map_err(|e| format!("cannot decompress zlib block: {e}"))?
            }
            Codec::Zstd => {
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
        match got as u64 {
            n if n == expected as u64 => Ok(()),
            n if n > expected as u64 => Err(format!("compressed block inflates beyond its stated size of {expected} bytes")),
            n => Err(format!("compressed block gave {n} bytes, header says {expected}")),
        }
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
}
