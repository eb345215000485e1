//! Action codes and the letters blkparse prints for them.
//!
//! `action` = category bits (BLK_TC_*) << 16 | action (__BLK_TA_*). Notify
//! records (category NOTIFY) are not I/O: process names, the wall-clock
//! start time, and free-text messages (printed as `m`).

/// BLK_TC_* category bits (the high half of `action`).
pub mod tc {
    pub const READ: u32 = 1 << 0;
    pub const WRITE: u32 = 1 << 1;
    pub const FLUSH: u32 = 1 << 2;
    pub const SYNC: u32 = 1 << 3;
    pub const QUEUE: u32 = 1 << 4;
    pub const REQUEUE: u32 = 1 << 5;
    pub const ISSUE: u32 = 1 << 6;
    pub const COMPLETE: u32 = 1 << 7;
    pub const FS: u32 = 1 << 8;
    pub const PC: u32 = 1 << 9;
    pub const NOTIFY: u32 = 1 << 10;
    pub const AHEAD: u32 = 1 << 11;
    pub const META: u32 = 1 << 12;
    pub const DISCARD: u32 = 1 << 13;
    pub const DRV_DATA: u32 = 1 << 14;
    pub const FUA: u32 = 1 << 15;
}

/// __BLK_TA_* (low 16 bits of `action`, cgroup bit masked off).
pub mod ta {
    pub const QUEUE: u32 = 1;
    pub const BACKMERGE: u32 = 2;
    pub const FRONTMERGE: u32 = 3;
    pub const GETRQ: u32 = 4;
    pub const SLEEPRQ: u32 = 5;
    pub const REQUEUE: u32 = 6;
    pub const ISSUE: u32 = 7;
    pub const COMPLETE: u32 = 8;
    pub const PLUG: u32 = 9;
    pub const UNPLUG_IO: u32 = 10;
    pub const UNPLUG_TIMER: u32 = 11;
    pub const INSERT: u32 = 12;
    pub const SPLIT: u32 = 13;
    pub const BOUNCE: u32 = 14;
    pub const REMAP: u32 = 15;
    pub const ABORT: u32 = 16;
    pub const DRV_DATA: u32 = 17;
}

/// __BLK_TN_* (notify records).
pub mod tn {
    pub const PROCESS: u32 = 0;
    pub const TIMESTAMP: u32 = 1;
    pub const MESSAGE: u32 = 2;
}

#[inline]
pub fn category(action: u32) -> u32 {
    action >> 16
}

/// The action number without the category bits and the cgroup flag.
#[inline]
pub fn code(action: u32) -> u32 {
    action & 0xffff & !super::record::TA_CGROUP
}

pub fn is_notify(action: u32) -> bool {
    category(action) & tc::NOTIFY != 0
}

/// The letter blkparse prints in its action column (`m` for messages).
pub fn letter(action: u32) -> &'static str {
    if is_notify(action) {
        return match code(action) {
            tn::MESSAGE => "m",
            tn::PROCESS => "N",
            tn::TIMESTAMP => "T",
            _ => "?",
        };
    }
    match code(action) {
        ta::QUEUE => "Q",
        ta::BACKMERGE => "M",
        ta::FRONTMERGE => "F",
        ta::GETRQ => "G",
        ta::SLEEPRQ => "S",
        ta::REQUEUE => "R",
        ta::ISSUE => "D",
        ta::COMPLETE => "C",
        ta::PLUG => "P",
        ta::UNPLUG_IO => "U",
        ta::UNPLUG_TIMER => "UT",
        ta::INSERT => "I",
        ta::SPLIT => "X",
        ta::BOUNCE => "B",
        ta::REMAP => "A",
        ta::ABORT => "K",
        ta::DRV_DATA => "?",
        _ => "?",
    }
}

/// The RWBS column as blkparse's fill_rwbs builds it: F (flush), then D
/// (discard) / W / R (bytes) / N (no data), then F (FUA), A (read-ahead),
/// S (sync), M (meta).
pub fn rwbs(action: u32, bytes: u32) -> String {
    let c = category(action);
    let mut s = String::with_capacity(5);
    if c & tc::FLUSH != 0 {
        s.push('F');
    }
    s.push(if c & tc::DISCARD != 0 {
        'D'
    } else if c & tc::WRITE != 0 {
        'W'
    } else if bytes != 0 {
        'R'
    } else {
        'N'
    });
    if c & tc::FUA != 0 {
        s.push('F');
    }
    if c & tc::AHEAD != 0 {
        s.push('A');
    }
    if c & tc::SYNC != 0 {
        s.push('S');
    }
    if c & tc::META != 0 {
        s.push('M');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_and_rwbs() {
        let q_write_sync = ((tc::QUEUE | tc::WRITE | tc::SYNC) << 16) | ta::QUEUE;
        assert_eq!(letter(q_write_sync), "Q");
        assert_eq!(rwbs(q_write_sync, 4096), "WS");
        assert_eq!(letter(ta::SPLIT), "X");
        assert_eq!(rwbs(ta::SPLIT, 4096), "R");
        assert_eq!(rwbs((tc::FLUSH << 16) | ta::ISSUE, 0), "FN");
        assert_eq!(letter(((tc::NOTIFY) << 16) | tn::MESSAGE), "m");
        assert_eq!(letter((tc::QUEUE << 16) | ta::UNPLUG_TIMER), "UT");
        assert_eq!(code((tc::QUEUE << 16) | super::super::record::TA_CGROUP | ta::QUEUE), ta::QUEUE);
    }
}
