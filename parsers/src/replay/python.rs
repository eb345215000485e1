//! The replay loops as `advisor._parsers` functions. NumPy arrays come in
//! through the buffer protocol, read in place, with the dtypes the signatures
//! name (the Python callers convert; a wrong one is a TypeError, not a
//! reinterpretation); booleans come as uint8 (NumPy's bool format `?` is not
//! a buffer element type PyO3 reads). Results go into arrays the caller
//! allocated. The loops keep the GIL, as the numba versions they replace did:
//! no Python code runs while they read the arrays, so none can change them.

use std::ptr::NonNull;

use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::{fsync_log, page_sweep, page_waits};

fn contiguous<T: Element>(b: &PyBuffer<T>) -> PyResult<NonNull<[T]>> {
    b.as_slice_ptr().ok_or_else(|| PyValueError::new_err("replay loops: an array is not C-contiguous"))
}

/// The array's elements, in place.
fn slice<'a, T: Element>(_py: Python<'a>, b: &'a PyBuffer<T>) -> PyResult<&'a [T]> {
    let p = contiguous(b)?;
    // SAFETY: the buffer is C-contiguous with elements of T's format and size (PyBuffer
    // checked both), and stays exported while `b` lives. The GIL is held throughout and
    // the loops call no Python, so nothing writes the array while the slice is read.
    Ok(unsafe { &*p.as_ptr() })
}

/// The array's elements, in place, to fill.
fn slice_mut<'a, T: Element>(_py: Python<'a>, b: &'a PyBuffer<T>) -> PyResult<&'a mut [T]> {
    if b.readonly() {
        return Err(PyValueError::new_err("replay loops: the output array is read-only"));
    }
    let p = contiguous(b)?;
    // SAFETY: as in `slice`, and the buffer is writable; the callers pass arrays of their
    // own, distinct from every input.
    Ok(unsafe { &mut *p.as_ptr() })
}

/// `sweep_ranks(n_pages, start_rank, ev_ts, ev_rank, first, t0, page_ns, tagged)`
/// -> (end, written, late, consumed): one writeback pass over page ranks.
#[pyfunction]
#[pyo3(name = "sweep_ranks")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn py_sweep_ranks(py: Python<'_>, n_pages: usize, start_rank: PyBuffer<i64>, ev_ts: PyBuffer<i64>, ev_rank: PyBuffer<i64>,
                          first: usize, t0: i64, page_ns: f64, tagged: bool) -> PyResult<(f64, i64, i64, i64)> {
    let (start_rank, ev_ts, ev_rank) = (slice(py, &start_rank)?, slice(py, &ev_ts)?, slice(py, &ev_rank)?);
    if ev_ts.len() != ev_rank.len() || start_rank.iter().chain(ev_rank).any(|&r| r < 0 || r as usize >= n_pages) {
        return Err(PyValueError::new_err("sweep_ranks: ranks out of range or arrays of different lengths"));
    }
    let s = page_sweep::sweep_ranks(n_pages, start_rank, ev_ts, ev_rank, first, t0, page_ns, tagged);
    Ok((s.end, s.written, s.late, s.consumed))
}

fn check(ok: bool, what: &str) -> PyResult<()> {
    if ok {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!("{what}: out of range or arrays of different lengths")))
    }
}

fn in_range(v: &[i64], n: usize) -> bool {
    v.iter().all(|&x| x >= 0 && (x as usize) < n)
}

/// `page_waits(out, ev_ts, ev_inode, ev_page, ev_writer, resume_ns, sub_ts, sub_inode,
/// sub_writer, sub_deadline, sub_done, sub_first_done, service_ns, transfer_ns,
/// closed_loop, serial, n_pages, n_inodes, n_writers, pages_per_request)`: each
/// dirtying's wait for its page's writeback, into `out`.
#[pyfunction]
#[pyo3(name = "page_waits")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn py_page_waits(py: Python<'_>, out: PyBuffer<f64>, ev_ts: PyBuffer<f64>, ev_inode: PyBuffer<i64>, ev_page: PyBuffer<i64>,
                         ev_writer: PyBuffer<i64>, resume_ns: PyBuffer<f64>, sub_ts: PyBuffer<i64>, sub_inode: PyBuffer<i64>,
                         sub_writer: PyBuffer<i64>, sub_deadline: PyBuffer<i64>, sub_done: PyBuffer<i64>,
                         sub_first_done: PyBuffer<i64>, service_ns: PyBuffer<f64>, transfer_ns: PyBuffer<f64>, closed_loop: bool,
                         serial: bool, n_pages: usize, n_inodes: usize, n_writers: usize, pages_per_request: i64) -> PyResult<()> {
    let (ts, inode, page, writer, resume) =
        (slice(py, &ev_ts)?, slice(py, &ev_inode)?, slice(py, &ev_page)?, slice(py, &ev_writer)?, slice(py, &resume_ns)?);
    let n = ts.len();
    check(out.item_count() == n && [inode.len(), page.len(), writer.len(), resume.len()].iter().all(|&l| l == n)
          && in_range(inode, n_inodes) && in_range(page, n_pages) && in_range(writer, n_writers), "page_waits events")?;
    let (s_ts, s_inode, s_writer, s_deadline, s_done, s_first, s_service, s_transfer) =
        (slice(py, &sub_ts)?, slice(py, &sub_inode)?, slice(py, &sub_writer)?, slice(py, &sub_deadline)?, slice(py, &sub_done)?,
         slice(py, &sub_first_done)?, slice(py, &service_ns)?, slice(py, &transfer_ns)?);
    let m = s_ts.len();
    check([s_inode.len(), s_writer.len(), s_deadline.len(), s_done.len(), s_first.len(), s_service.len(), s_transfer.len()]
              .iter()
              .all(|&l| l == m)
              && s_inode.iter().all(|&x| x < n_inodes as i64)
              && s_writer.iter().all(|&x| x < n_writers as i64)
              && pages_per_request >= 1,
          "page_waits submissions")?;
    let ev = page_waits::Dirtyings { ts, inode, page, writer, resume_ns: resume };
    let sub = page_waits::Submissions { ts: s_ts, inode: s_inode, writer: s_writer, deadline: s_deadline, done: s_done,
                                        first_done: s_first, service_ns: s_service, transfer_ns: s_transfer };
    let setup = page_waits::Setup { closed_loop, serial, n_pages, n_inodes, n_writers, pages_per_request };
    page_waits::page_waits(&ev, &sub, &setup, slice_mut(py, &out)?);
    Ok(())
}

/// `shared_log(cost, busy, pid, start, think_ns, paced, data_ns, per_extent, inode_slot,
/// prep, commit_ns, batch_ticks, wake, txn_ns, tick)` -> commits: each fsync's cost and
/// its task's busy time into `cost` and `busy`.
#[pyfunction]
#[pyo3(name = "shared_log")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn py_shared_log(py: Python<'_>, cost: PyBuffer<f64>, busy: PyBuffer<f64>, pid: PyBuffer<i64>, start: PyBuffer<i64>,
                         think_ns: PyBuffer<f64>, paced: PyBuffer<u8>, data_ns: PyBuffer<f64>, per_extent: PyBuffer<f64>,
                         inode_slot: PyBuffer<i64>, prep: PyBuffer<f64>, commit_ns: PyBuffer<f64>, batch_ticks: PyBuffer<i64>,
                         wake: PyBuffer<f64>, txn_ns: f64, tick: i64) -> PyResult<i64> {
    let paced: Vec<bool> = slice(py, &paced)?.iter().map(|&b| b != 0).collect();
    let (pid, start, think, data, per_extent, slot, prep) = (slice(py, &pid)?, slice(py, &start)?, slice(py, &think_ns)?,
                                                             slice(py, &data_ns)?, slice(py, &per_extent)?, slice(py, &inode_slot)?,
                                                             slice(py, &prep)?);
    let (commit_ns, batch_ticks, wake) = (slice(py, &commit_ns)?, slice(py, &batch_ticks)?, slice(py, &wake)?);
    let n = pid.len();
    // One commit per fsync at most: each commit returns at least one.
    check(cost.item_count() == n && busy.item_count() == n
          && [start.len(), think.len(), paced.len(), data.len(), per_extent.len(), slot.len(), prep.len()].iter().all(|&l| l == n)
          && [commit_ns.len(), batch_ticks.len(), wake.len()].iter().all(|&l| l >= n)
          && slot.iter().all(|&s| s >= 0)
          && txn_ns > 0.0,
          "shared_log")?;
    let f = fsync_log::Fsyncs { pid, start, think_ns: think, paced: &paced, data_ns: data, per_extent, inode_slot: slot, prep };
    let c = fsync_log::Commits { commit_ns, batch_ticks, wake };
    let r = fsync_log::shared_log(&f, &c, txn_ns, tick);
    cost.copy_from_slice(py, &r.cost)?;
    busy.copy_from_slice(py, &r.busy)?;
    Ok(r.commits)
}
