"""The replay's Rust loops refuse inputs they would misread: a cast that changes values
(float timestamps to int64) or an index outside its array is an error, never a wrong
answer or a crash."""

from __future__ import annotations

import numpy as np
import pytest

from advisor.replay import loops


def sweep(**kw):
    args = dict(n_pages=4, start_rank=np.array([0, 2]), ev_ts=np.array([15, 16]), ev_rank=np.array([3, 1]), first=0, t0=0,
                page_ns=10.0, tagged=False)
    return loops.sweep_ranks(**{**args, **kw})


def test_sweep_answers_for_good_input():
    assert sweep() == (30.0, 3, 1, 2)


def test_float_timestamps_are_not_truncated_to_int64():
    with pytest.raises(TypeError):
        sweep(ev_ts=np.array([15.5, 16.0]))


def test_a_rank_outside_the_pages_is_refused():
    with pytest.raises(ValueError, match="out of range"):
        sweep(ev_rank=np.array([3, 4]))


def test_shared_log_refuses_fewer_commit_draws_than_fsyncs():
    n = 3
    with pytest.raises(ValueError, match="shared_log"):
        loops.shared_log(np.arange(n), np.arange(n) * 100, np.zeros(n), np.zeros(n, bool), np.ones(n), np.zeros(n), np.arange(n),
                         30_000_000_000, np.ones(n - 1), np.zeros(n - 1, np.int64), np.zeros(n), np.zeros(n - 1), 0)
