"""Writing a store so that it is either complete or absent: a temporary name
beside it, renamed into place when finished; locks that tell a live writer from
a dead one; and the faults of the machine (full disk, read-only file system)
turned into one line."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

import duckdb

from advisor.errors import TraceIOError
from advisor.store import parts, readers
from advisor.store.connect import connect


class StoreWriteError(TraceIOError):
    """The store could not be written (full disk, read-only file system, permissions)."""


def write_fault(e: BaseException) -> str | None:
    """Why writing failed, when the machine is the cause: one line."""
    if isinstance(e, OSError):
        return e.strerror or str(e)
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    machine = any(why in text for why in ("No space left", "Read-only file system", "Permission denied", "Disk quota"))
    if isinstance(e, duckdb.Error):
        # A full disk surfaces as an IO error, or at COMMIT as a failed transaction.
        if isinstance(e, (duckdb.IOException, duckdb.PermissionException, duckdb.OutOfMemoryException)) or machine:
            return text
    # The Parquet writer (a Rust extension) raises ValueError naming the file and the OS
    # error: "...parts/raw%2esys_exit_mprotect.parquet: Parquet error: fail to get inner
    # writer: \"No space left on device (os error 28)\"".
    if isinstance(e, ValueError) and machine:
        return text
    return None


def write_checksum(path: Path, digest: str, token: str | None = None) -> None:
    """`digest`, then the token of the store's parts directory if it has one: reading the
    token from the catalog means opening it, which takes 0.3-0.5 s for a catalog of
    2,600 objects (an `-e all` capture). A token written here that is not the catalog's
    names a directory whose files are not the ones hashed, so the check fails all the same."""
    # Not "*.tmp": that is a temporary store to the clean-up of dead ones.
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")
    try:
        tmp.write_text(digest + (f" {token}" if token else "") + "\n")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def check_target(store: Path) -> None:
    """A store replaces only a regular file: `-o /dev/null`, `-o DIR` or
    `-o /dev/stdout` (a link) must not turn a device, a directory or a link
    into a database: the store is renamed into place."""
    try:
        st = store.lstat()
    except FileNotFoundError:
        return
    except OSError as e:
        raise StoreWriteError(f"{store}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        what = {stat.S_IFDIR: "a directory", stat.S_IFLNK: "a symbolic link"}.get(stat.S_IFMT(st.st_mode), "not a regular file")
        raise StoreWriteError(f"{store}: is {what}; a store is written only to a new or regular file")


@dataclass
class Temporary:
    """Where one ingest writes: the catalog under a temporary name and its
    parts directory, both named by the same token, and the lock that says
    this writer is alive."""

    catalog: Path
    parts: Path
    token: str
    lock_path: Path
    lock: int | None

    def release(self) -> None:
        """Give up the lock: from now on the parts directory is no longer this
        writer's to keep (once published, the catalog in place names it)."""
        try:
            self.lock_path.unlink(missing_ok=True)
        except OSError:
            pass
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None


def _lock_of(store: Path, token: str) -> Path:
    return store.with_name(f".{store.name}.{token}.tmp.lock")


@contextlib.contextmanager
def temporary(store: Path):
    """The temporary names a store is written under (beside it), held by an
    exclusive lock on a file next to them.

    The lock, not the writer's process id, tells a live temporary store from
    one whose writer was killed (SIGKILL, power loss): a process id means
    nothing to an ingest in another PID namespace (a container) or on another
    host sharing the cache over NFS, where flock is carried by the server.
    https://man7.org/linux/man-pages/man2/flock.2.html
    """
    token = f"{os.getpid()}-{secrets.token_hex(4)}"
    tmp = store.with_name(f".{store.name}.{token}.tmp")
    lock_path = _lock_of(store, token)
    try:
        lock = take_lock(lock_path)
    except OSError as e:
        raise StoreWriteError(f"{store}: cannot write the store: {e.strerror}") from None
    held = Temporary(tmp, parts.directory(store, token), token, lock_path, lock)
    try:
        if lock is not None:  # without locks (NFS without lockd) nothing may be judged dead
            _remove_dead_temps(store)
        yield held
    finally:
        for p in (tmp, Path(str(tmp) + ".wal")):
            try:
                p.unlink(missing_ok=True)
            except OSError:
                pass
        # Released last: until then the parts directory is this writer's.
        held.release()


@contextlib.contextmanager
def publishing(store: Path):
    """One process at a time, in the store's directory, renames a store into
    place or removes parts directories no catalog reads.

    Without it, two ingests of one capture into a shared cache that finish
    together each keep the other's directory: B renames its catalog over A's
    while A, between its own rename and its clean-up, still holds its lock, so
    B keeps A's directory as a live writer's; A then keeps its own as "the one
    in place", and one of them is left behind for good. A clean-up that read
    the catalog's token just before another writer's rename could even remove
    the directory the new catalog reads. The lock is flock(2) on the
    directory itself, so no lock file is left beside the stores.
    """
    try:
        fd = os.open(store.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        fd = None  # not readable: the rename is still atomic, the clean-up may leave a directory
    try:
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:
                pass  # no locks on this file system: as above
        yield
    finally:
        if fd is not None:
            os.close(fd)


def publish(tmp: Temporary, store: Path, has_parts: bool) -> None:
    """Rename the finished catalog over `store`, remove the parts directories
    of the store it replaced and of writers that died, and give up the
    writer's lock, all under the directory's lock (see `publishing`). The
    lock is given up inside it so that the next writer to publish sees this
    one's directory as no longer held, and removes it once it is replaced."""
    with publishing(store):
        check_target(store)  # it may have appeared while parsing
        os.replace(tmp.catalog, store)
        _remove_stale_parts(store, current=tmp.token if has_parts else None)
        tmp.release()


def writer_alive(store: Path, token: str) -> bool | None:
    """Whether the writer of `token` is alive: True, False, or None when its
    lock file cannot be opened (another user's: leave it alone)."""
    return held(_lock_of(store, token))


def any_writer_alive(store: Path) -> bool:
    """Whether any writer of `store` may be alive (a lock file of it held, or not
    readable to judge)."""
    return any(held(lock) is not False for lock in store.parent.glob(f".{store.name}.*.tmp.lock"))


def take_lock(path: Path) -> int | None:
    """Create `path` and hold an exclusive flock(2) on it until the descriptor is
    closed: None when the file system has no locks (then nothing may be judged dead)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        return None
    return fd


def held(lock_path: Path) -> bool | None:
    """Whether a live process holds the lock file: True, False (no such file, or
    its lock can be taken), or None when it cannot be opened (another user's)."""
    try:
        lock = os.open(lock_path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(lock)


def _remove_dead_temps(store: Path) -> None:
    """Temporary stores whose writer is gone (killed: no chance to clean up).
    A writer holds its lock file from before the temporary store exists until
    after it is renamed or removed, so a temporary store whose lock can be
    taken, or that has no lock file, is dead."""
    prefix = f".{store.name}."
    for tmp in store.parent.glob(f"{parts.glob_escape(prefix)}*.tmp"):
        token = tmp.name[len(prefix) : -len(".tmp")]
        if writer_alive(store, token) is not False:
            continue
        for p in (tmp, Path(str(tmp) + ".wal"), _lock_of(store, token)):
            try:
                p.unlink(missing_ok=True)
            except OSError:
                pass
    with publishing(store):
        _remove_stale_parts(store)


def _remove_stale_parts(store: Path, current: str | None = None) -> None:
    """Parts directories no catalog names and no live writer holds: left by an
    ingest that was killed, or by the store this one replaced. `current`: the
    token of the catalog in place (read from it when not given). The caller
    holds `publishing(store)`."""
    found = parts.directories(store)
    if not found:
        return
    if current is None:
        current = current_token(store)
    if current == "":
        return  # the catalog in place cannot be read: keep every directory rather than guess
    for d in found:
        token = parts.token_of(store, d)
        if token == current or writer_alive(store, token) is not False:
            continue
        with readers.unread(d) as free:
            if free:
                parts.remove(d)


def current_token(store: Path) -> str | None:
    """The token of the parts directory the store in place reads."""
    if not store.is_file():
        return None
    try:
        with connect(store, read_only=True) as con:
            row = con.execute("SELECT value FROM trace_info WHERE key = 'parts_token'").fetchone()
    except duckdb.Error:
        return ""  # unreadable: keep every directory rather than guess
    return row[0] if row else None
