//! Bounds-checked, endian-aware reading of a byte slice.
//!
//! Every read checks the remaining length first, so a size or count taken
//! from a damaged file can never make us read (or allocate) past the data we
//! really have. Offsets in errors are absolute file offsets (`base + pos`).

use crate::error::Damage;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    #[inline(always)]
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    #[inline(always)]
    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
    #[inline(always)]
    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }

    /// Read an unsigned integer of 1, 2, 4 or 8 bytes from the start of `b`
    /// (the caller has checked `b.len() >= size`).
    #[inline(always)]
    pub fn uint(self, b: &[u8], size: usize) -> u64 {
        match size {
            1 => b[0] as u64,
            2 => self.u16([b[0], b[1]]) as u64,
            4 => self.u32([b[0], b[1], b[2], b[3]]) as u64,
            8 => self.u64([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            _ => 0,
        }
    }
}

/// A cursor over `data`, which starts at file offset `base`.
#[derive(Debug, Clone)]
pub struct ByteReader<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    pub endian: Endian,
}

impl<'a> ByteReader<'a> {
    pub fn new(data: &'a [u8], base: u64, endian: Endian) -> Self {
        ByteReader { data, pos: 0, base, endian }
    }

    /// Absolute file offset of the next byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    fn short(&self, need: usize, what: &str) -> Damage {
        Damage::new(self.offset(), format!("truncated {what}: need {need} bytes, {} left", self.remaining()))
    }

    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], Damage> {
        if n > self.remaining() {
            return Err(self.short(n, what));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn skip(&mut self, n: usize, what: &str) -> Result<(), Damage> {
        self.bytes(n, what).map(|_| ())
    }

    pub fn u8(&mut self, what: &str) -> Result<u8, Damage> {
        Ok(self.bytes(1, what)?[0])
    }

    pub fn u16(&mut self, what: &str) -> Result<u16, Damage> {
        let b = self.bytes(2, what)?;
        Ok(self.endian.u16([b[0], b[1]]))
    }

    pub fn u32(&mut self, what: &str) -> Result<u32, Damage> {
        let b = self.bytes(4, what)?;
        Ok(self.endian.u32([b[0], b[1], b[2], b[3]]))
    }

    pub fn u64(&mut self, what: &str) -> Result<u64, Damage> {
        let b = self.bytes(8, what)?;
        Ok(self.endian.u64([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
    }

    /// A NUL-terminated string of at most `max` bytes (terminator excluded).
    pub fn cstr(&mut self, max: usize, what: &str) -> Result<&'a [u8], Damage> {
        let rest = &self.data[self.pos..];
        let window = &rest[..rest.len().min(max + 1)];
        match memchr::memchr(0, window) {
            Some(n) => {
                self.pos += n + 1;
                Ok(&rest[..n])
            }
            None if window.len() > max => Err(Damage::new(self.offset(), format!("{what}: string longer than {max} bytes"))),
            None => Err(Damage::new(self.offset(), format!("truncated {what}: no terminating NUL"))),
        }
    }

    /// A length-prefixed blob whose length was read from the file: checked
    /// against what is really left before anything is sliced.
    pub fn sized(&mut self, len: u64, what: &str) -> Result<&'a [u8], Damage> {
        if len > self.remaining() as u64 {
            return Err(Damage::new(
                self.offset(),
                format!("{what} claims {len} bytes but only {} are left in the file", self.remaining()),
            ));
        }
        self.bytes(len as usize, what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_endians() {
        let d = [1u8, 2, 3, 4];
        assert_eq!(ByteReader::new(&d, 0, Endian::Little).u32("x").unwrap(), 0x04030201);
        assert_eq!(ByteReader::new(&d, 0, Endian::Big).u32("x").unwrap(), 0x01020304);
    }

    #[test]
    fn short_read_names_offset() {
        let d = [0u8; 3];
        let mut r = ByteReader::new(&d, 100, Endian::Little);
        r.u8("a").unwrap();
        let e = r.u32("size").unwrap_err();
        assert_eq!(e.offset, 101);
        assert!(e.reason.contains("truncated size"));
    }

    #[test]
    fn sized_rejects_lies() {
        let d = [0u8; 16];
        let mut r = ByteReader::new(&d, 0, Endian::Little);
        assert!(r.sized(1 << 40, "section").is_err());
        assert_eq!(r.remaining(), 16);
    }

    #[test]
    fn cstr_limits() {
        let d = b"abc\0defg";
        let mut r = ByteReader::new(d, 0, Endian::Little);
        assert_eq!(r.cstr(16, "s").unwrap(), b"abc");
        assert!(r.cstr(16, "s").is_err());
        let mut r = ByteReader::new(d, 0, Endian::Little);
        assert!(r.cstr(2, "s").is_err());
    }
}
