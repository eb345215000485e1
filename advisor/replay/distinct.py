"""Sorted distinct values of integer arrays (page keys, inode numbers, pids).

NumPy 2's np.unique without return_* flags, and union1d built on it, go through a hash
table, which is far slower than a sort when most values are distinct: the union of two
sorted arrays of 3 M distinct page keys took 13 s through np.union1d and 0.13 s sorted
(numpy 2.4.6, this machine, loaded). These give the same arrays, sorted."""

from __future__ import annotations

import numpy as np


def distinct(a: np.ndarray) -> np.ndarray:
    """np.unique(a) for an integer array, by a sort."""
    s = np.sort(a)
    return s[np.concatenate(([True], s[1:] != s[:-1]))] if len(s) else s


def union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.union1d(a, b) for integer arrays."""
    return distinct(np.concatenate((a, b)))
