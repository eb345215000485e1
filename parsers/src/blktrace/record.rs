//! One blktrace record: the 48-byte `struct blk_io_trace` and its payload.
//!
//! ```text
//! u32 magic      0x65617400 | version (7)      u32 sequence (per device and CPU)
//! u64 time (ns)  u64 sector   u32 bytes   u32 action (category bits << 16 | action)
//! u32 pid        u32 device (kernel dev_t: major << 20 | minor)
//! u32 cpu        u16 error    u16 pdu_len, then pdu_len bytes of payload
//! ```
//!
//! The byte order is the tracing machine's; the magic tells which. Since
//! Linux 4.14 a record whose action has `__BLK_TA_CGROUP` (bit 8) carries the
//! cgroup id as the first 8 payload bytes. Remap payloads and the integers of
//! split/unplug records are big-endian whatever the machine (the kernel
//! writes them with cpu_to_be).

use crate::bytes::Endian;

pub const MAGIC: u32 = 0x6561_7400;
pub const VERSION: u32 = 0x07;
pub const HEADER: usize = 48;
/// __BLK_TA_CGROUP: the payload starts with a u64 cgroup id.
pub const TA_CGROUP: u32 = 1 << 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u32,
    pub sequence: u32,
    pub time: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    pub device: u32,
    pub cpu: u32,
    pub error: u16,
    pub pdu_len: u16,
}

/// The byte order of a stream, from its first magic word.
pub fn detect_endian(first4: [u8; 4]) -> Option<Endian> {
    if u32::from_le_bytes(first4) & 0xffff_ff00 == MAGIC {
        Some(Endian::Little)
    } else if u32::from_be_bytes(first4) & 0xffff_ff00 == MAGIC {
        Some(Endian::Big)
    } else {
        None
    }
}

impl Header {
    /// Parse the fixed part; `Err` says why it is not a record.
    pub fn parse(b: &[u8; HEADER], e: Endian) -> Result<Header, String> {
        let u32_at = |o: usize| e.u32([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| e.u64([b[o], b[o + 1], b[o + 2], b[o + 3], b[o + 4], b[o + 5], b[o + 6], b[o + 7]]);
        let magic = u32_at(0);
        if magic & 0xffff_ff00 != MAGIC {
            return Err(format!("bad magic {magic:#010x}"));
        }
        let version = magic & 0xff;
        if version != VERSION {
            return Err(format!("unsupported blktrace version {version:#x} (7 is read)"));
        }
        Ok(Header {
            version,
            sequence: u32_at(4),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u32_at(40),
            error: e.u16([b[44], b[45]]),
            pdu_len: e.u16([b[46], b[47]]),
        })
    }

    pub fn major(&self) -> u32 {
        self.device >> 20
    }

    pub fn minor(&self) -> u32 {
        self.device & 0xfffff
    }
}

/// A record with its payload (cgroup id split off).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub h: Header,
    pub cgroup: Option<u64>,
    pub pdu: Vec<u8>,
}

impl Record {
    pub fn from_parts(h: Header, payload: &[u8], e: Endian) -> Record {
        if h.action & TA_CGROUP != 0 && payload.len() >= 8 {
            let mut id = [0u8; 8];
            id.copy_from_slice(&payload[..8]);
            Record { h, cgroup: Some(e.u64(id)), pdu: payload[8..].to_vec() }
        } else {
            Record { h, cgroup: None, pdu: payload.to_vec() }
        }
    }

    /// The big-endian u64 at the start of the payload (split point, unplug depth).
    pub fn pdu_u64(&self) -> Option<u64> {
        let b: [u8; 8] = self.pdu.get(..8)?.try_into().ok()?;
        Some(u64::from_be_bytes(b))
    }

    /// Remap payload: (device_from, device_to, sector_from), big-endian.
    pub fn remap(&self) -> Option<(u32, u32, u64)> {
        let p = self.pdu.get(..16)?;
        Some((
            u32::from_be_bytes(p[0..4].try_into().ok()?),
            u32::from_be_bytes(p[4..8].try_into().ok()?),
            u64::from_be_bytes(p[8..16].try_into().ok()?),
        ))
    }
}

#[cfg(test)]
pub fn encode(h: &Header, payload: &[u8], e: Endian) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    let put32 = |o: &mut Vec<u8>, v: u32| {
        o.extend_from_slice(&match e {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        })
    };
    let put64 = |o: &mut Vec<u8>, v: u64| {
        o.extend_from_slice(&match e {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        })
    };
    let put16 = |o: &mut Vec<u8>, v: u16| {
        o.extend_from_slice(&match e {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        })
    };
    put32(&mut out, MAGIC | h.version);
    put32(&mut out, h.sequence);
    put64(&mut out, h.time);
    put64(&mut out, h.sector);
    put32(&mut out, h.bytes);
    put32(&mut out, h.action);
    put32(&mut out, h.pid);
    put32(&mut out, h.device);
    put32(&mut out, h.cpu);
    put16(&mut out, h.error);
    put16(&mut out, payload.len() as u16);
    out.extend_from_slice(payload);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr() -> Header {
        Header {
            version: 7,
            sequence: 3,
            time: 1234,
            sector: 99,
            bytes: 4096,
            action: 0x0001_0001,
            pid: 42,
            device: (8 << 20) | 16,
            cpu: 1,
            error: 0,
            pdu_len: 0,
        }
    }

    #[test]
    fn both_byte_orders() {
        for e in [Endian::Little, Endian::Big] {
            let raw = encode(&hdr(), &[], e);
            assert_eq!(detect_endian(raw[..4].try_into().unwrap()), Some(e));
            let h = Header::parse(raw[..48].try_into().unwrap(), e).unwrap();
            assert_eq!(h, hdr());
            assert_eq!((h.major(), h.minor()), (8, 16));
        }
    }

    #[test]
    fn rejects_bad_magic_and_version() {
        let mut raw = encode(&hdr(), &[], Endian::Little);
        raw[0] = 6;
        assert!(Header::parse(raw[..48].try_into().unwrap(), Endian::Little).unwrap_err().contains("version"));
        raw[3] = 0;
        assert!(Header::parse(raw[..48].try_into().unwrap(), Endian::Little).unwrap_err().contains("magic"));
        assert_eq!(detect_endian([1, 2, 3, 4]), None);
    }

    #[test]
    fn cgroup_and_payload_integers() {
        let mut h = hdr();
        h.action |= TA_CGROUP;
        let mut payload = 77u64.to_le_bytes().to_vec();
        payload.extend_from_slice(&5u64.to_be_bytes());
        let r = Record::from_parts(h, &payload, Endian::Little);
        assert_eq!(r.cgroup, Some(77));
        assert_eq!(r.pdu_u64(), Some(5));
        let mut remap = Vec::new();
        remap.extend_from_slice(&((253u32 << 20) | 1).to_be_bytes());
        remap.extend_from_slice(&((8u32 << 20) | 0).to_be_bytes());
        remap.extend_from_slice(&2048u64.to_be_bytes());
        let r = Record::from_parts(hdr(), &remap, Endian::Little);
        assert_eq!(r.remap(), Some(((253 << 20) | 1, 8 << 20, 2048)));
    }
}
