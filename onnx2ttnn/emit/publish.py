"""Publishing the files of one conversion (program, weights, IR, IR dumps) as one set: all new or all old.

`publish({path: payload, ...})`:
1. finish or roll back, and remove, what killed runs left in each target folder (`remove_stale`);
2. write every payload to a temporary file in its target's folder, and fsync it;
3. commit: write a journal naming every (target, temporary file, backup) into each folder of the set (the
   first one is the primary) and fsync it; keep each existing target's old file under a backup name (a hard
   link; a rename where the file system has no hard links); rename every temporary file onto its target (the
   rename window: nothing else happens between the first rename and the last); fsync the folders; remove the
   journals (the primary first: from then on the set is final), then the backups.
Any failure before the last rename (an OSError, any exception, SIGINT or SIGTERM) rolls back: each target
that holds its new file gets its backup back (or is removed if it did not exist), and every temporary file,
backup and journal is removed. `check_distinct` refuses, before anything is written, an output that is an
input or another output.

Names. Every file made here is `.onnx2ttnn-<kind>-<pid>-<16 hex digits>` in the target's folder, kind `tmp`
(a new file), `old` (a backup) or `set` (a journal). A later publish into the folder treats such a file as
stale when it is the user's own and its pid is not alive on this machine (or is this process's pid but not a
file it is using). A stale journal whose primary is gone is only removed (the set was final); one whose
targets all hold their new files is finished; any other is rolled back. Then the stale files are removed. So
what a run killed with SIGKILL leaves is cleaned up by the next run into the same folder. A journal naming
files that are not of its own set is removed without being acted on.

Signals. While `publish` runs in the main thread, SIGINT and SIGTERM raise inside it (the temporary files
are removed, the old set stays), and are then re-raised to the handler they had before, which is restored;
inside the clean-up, the commit and the roll-back they wait until the step is over.

Guarantee: after an exception, SIGINT or SIGTERM, the old files (the same inodes) and no new one; after
SIGKILL, the old set or the new set, plus hidden files the next publish into the folder removes.
Limits:
- SIGKILL inside the rename window (one rename per file after all data is synced: microseconds), or while
  the next run rolls such a set back, leaves a mix until a publish into any folder of the set rolls it back
  to the old set; a reader in between sees the mix. Power loss: the data and the journal are synced before
  the window and the folders after it; what a file system keeps of unsynced renames is its own.
- Liveness is per machine: in a folder shared by several machines a live writer on another one can lose its
  temporary files (its publish then fails and rolls back).
- New files get mode 0644; the old file's mode and owner are not carried over. A target that is a symlink is
  replaced by a regular file (the file it pointed to is not written).
- Runs writing the same targets at the same time are not serialized: each set is published whole and the
  last one wins (a roll-back restores a backup only where the target still holds its own new file).
- POSIX only (pid liveness through kill(pid, 0), signals).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import threading
from typing import Mapping, Optional

from onnx2ttnn.errors import ConversionError

_NAME = re.compile(r"^\.onnx2ttnn-(tmp|old|set)-([0-9]{1,20})-[0-9a-f]{16}$")
_MINE: set[str] = set()  # the files this process is using now: its own pid is alive, but these are not stale


# --- outputs must be distinct ---------------------------------------------------------------------
def check_distinct(inputs: list[tuple[str, str]], outputs: list[tuple[str, str]]) -> None:
    """ConversionError when an output is an input or an earlier output: the same resolved path or, for files
    that exist, the same inode (so a hard link or a symlink to the model counts). Pairs are (role, path)."""
    seen = [(role, path, _identity(path)) for role, path in inputs]
    for role, path in outputs:
        identity = _identity(path)
        for other_role, other, other_identity in seen:
            if identity & other_identity:
                raise ConversionError(f"{role} {path!r} is the same file as {other_role} {other!r}; nothing was "
                                      "written (choose another name)")
        seen.append((role, path, identity))


def _identity(path: str) -> set:
    keys = {("path", os.path.realpath(path))}
    with contextlib.suppress(OSError, ValueError):
        stat = os.stat(path)
        keys.add(("inode", stat.st_dev, stat.st_ino))
    return keys


# --- publishing -----------------------------------------------------------------------------------
def publish(payloads: Mapping[str, bytes | str]) -> None:
    """Write the files (path -> bytes, or text written as UTF-8) as one set; see the module docstring."""
    if not payloads:
        return
    check_distinct([], [("the file", path) for path in payloads])
    entries = [_Entry(os.path.abspath(path), payload) for path, payload in payloads.items()]
    folders = list(dict.fromkeys(os.path.dirname(e.target) for e in entries))
    made: list[str] = []
    try:
        with _SignalGuard() as guard:
            with guard.critical():
                for folder in folders:
                    remove_stale(folder)
            try:
                for entry in entries:
                    _stage(entry, made)
                with guard.critical():
                    _commit(entries, folders, made)
            except BaseException:
                with guard.critical():
                    for entry in entries:
                        _discard(entry.temp)
                raise
    finally:
        _MINE.difference_update(made)


class _Entry:
    """One file of the set: where it goes, what it holds, and the files that stand in for it meanwhile."""

    def __init__(self, target: str, payload: bytes | str) -> None:
        self.target = target
        self.payload = payload.encode("utf-8") if isinstance(payload, str) else payload
        self.temp: Optional[str] = None
        self.backup: Optional[str] = None
        self.new: Optional[tuple[int, int]] = None  # (device, inode) of the new file

    def record(self) -> dict:
        return {"target": self.target, "temp": self.temp, "backup": self.backup, "new": list(self.new)}


def _name(folder: str, kind: str, made: list[str]) -> str:
    """A fresh name of this module's own kind in `folder`, registered as in use by this process."""
    path = os.path.join(folder, f".onnx2ttnn-{kind}-{os.getpid()}-{secrets.token_hex(8)}")
    _MINE.add(path)
    made.append(path)
    return path


def _stage(entry: _Entry, made: list[str]) -> None:
    """Write the entry's payload to a temporary file next to its target and sync it to disk."""
    if os.path.exists(entry.target) and not os.path.isfile(entry.target):
        raise IsADirectoryError(21, "it exists and is not a file", entry.target)
    entry.temp = _name(os.path.dirname(entry.target), "tmp", made)
    try:
        fd = os.open(entry.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
        with os.fdopen(fd, "wb") as handle:
            handle.write(entry.payload)
            handle.flush()
            os.fchmod(fd, 0o644)
            os.fsync(fd)
            stat = os.fstat(fd)
    except OSError as exc:
        raise _naming(exc, entry.target) from None
    entry.new = (stat.st_dev, stat.st_ino)


def _commit(entries: list[_Entry], folders: list[str], made: list[str]) -> None:
    """Journals, backups, renames; on any failure roll back to the old files (see the module docstring)."""
    journals = [_name(folder, "set", made) for folder in folders]
    for entry in entries:
        entry.backup = _name(os.path.dirname(entry.target), "old", made) if os.path.lexists(entry.target) else None
    record = {"journals": journals, "entries": [entry.record() for entry in entries]}
    current = entries[0]
    try:
        for journal in journals:
            _write_journal(journal, record)
        for current in entries:
            if current.backup:
                _keep_old(current)
        for current in entries:  # the rename window: nothing else between the first rename and the last
            os.replace(current.temp, current.target)
    except BaseException as exc:
        _roll_back(record)
        if isinstance(exc, OSError):
            raise _naming(exc, current.target) from None
        raise
    _finish(record)


def _keep_old(entry: _Entry) -> None:
    """The target's old file under the backup name: a hard link (the target stays in place), else a rename."""
    try:
        os.link(entry.target, entry.backup, follow_symlinks=False)
    except OSError:
        os.rename(entry.target, entry.backup)


def _finish(record: dict) -> None:
    """Every target holds its new file: sync the folders, then remove the journals (the primary first: from
    then on the set is final) and the backups."""
    for folder in dict.fromkeys(os.path.dirname(item["target"]) for item in record["entries"]):
        _sync_folder(folder)
    for path in record["journals"] + [item["backup"] for item in record["entries"]]:
        with contextlib.suppress(OSError):  # the set is whole; a file left here is finished by the next run
            _discard(path)


def _roll_back(record: dict) -> None:
    """Put every target back as it was before the set was committed; remove the set's files, journals last
    (the primary after the others). Idempotent, so a run killed while rolling back is finished later."""
    for item in record["entries"]:
        target, backup, new = item["target"], item["backup"], tuple(item["new"])
        holds_new = _inode(target) == new
        if backup and os.path.lexists(backup):
            if holds_new or not os.path.lexists(target):
                os.replace(backup, target)
            else:
                _discard(backup)
        elif holds_new and not backup:
            _discard(target)
        _discard(item["temp"])
    for folder in dict.fromkeys(os.path.dirname(item["target"]) for item in record["entries"]):
        _sync_folder(folder)
    for journal in reversed(record["journals"]):
        _discard(journal)


# --- what killed runs left ------------------------------------------------------------------------
def remove_stale(folder: str) -> list[str]:
    """Roll back the sets that killed runs left half-committed in `folder`, then remove their files; returns
    the paths removed or rolled back."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    stale = []
    for name in names:
        match = _NAME.match(name)
        path = os.path.join(folder, name)
        if match and _is_stale(path, int(match.group(2))):
            stale.append((match.group(1), path))
    for kind, path in stale:
        if kind == "set":
            _recover(path)
    for kind, path in stale:
        if kind != "set":
            _discard(path)
    return [path for _, path in stale]


def _is_stale(path: str, pid: int) -> bool:
    """Left by a run that is gone: not a file this process uses, the writer's pid not alive, the user's own."""
    try:
        if os.lstat(path).st_uid != os.geteuid():
            return False
    except OSError:
        return False
    if pid == os.getpid():
        return path not in _MINE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (OverflowError, ValueError):  # no process can have that pid
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


def _recover(journal: str) -> None:
    """Finish the set `journal` describes when all its renames were made, else roll it back; only remove the
    journal when its primary is gone (the set was final)."""
    try:
        with open(journal, encoding="utf-8") as handle:
            record = json.load(handle)
        _check_record(record, journal)
    except (OSError, ValueError, KeyError, TypeError):  # cut short while written: no rename had started
        _discard(journal)
        return
    if journal != record["journals"][0] and not os.path.lexists(record["journals"][0]):
        _discard(journal)  # the primary is gone: the set was final
    elif all(_inode(item["target"]) == tuple(item["new"]) for item in record["entries"]):
        _finish(record)  # killed after the last rename: the new set is whole, keep it
    else:
        _roll_back(record)


def _check_record(record: dict, journal: str) -> None:
    """ValueError unless every file the journal names is of this module's kinds and of the journal's pid."""
    pid = _NAME.match(os.path.basename(journal)).group(2)
    names = [(path, "set") for path in record["journals"]]
    for item in record["entries"]:
        names += [(item["temp"], "tmp")] + ([(item["backup"], "old")] if item["backup"] is not None else [])
        if not isinstance(item["target"], str) or len(item["new"]) != 2:
            raise ValueError("bad entry")
    for path, kind in names:
        match = _NAME.match(os.path.basename(path))
        if not match or match.group(1) != kind or match.group(2) != pid:
            raise ValueError(f"not a file of this set: {path!r}")
    if journal not in record["journals"]:
        raise ValueError("the journal does not list itself")


# --- small helpers --------------------------------------------------------------------------------
def _write_journal(path: str, record: dict) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(record, handle)
        handle.flush()
        os.fsync(fd)
    _sync_folder(os.path.dirname(path))


def _sync_folder(folder: str) -> None:
    """fsync a folder so the renames in it are on disk (file systems that cannot are skipped)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _inode(path: str) -> Optional[tuple[int, int]]:
    try:
        stat = os.lstat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _discard(path: Optional[str]) -> None:
    if path:
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            os.unlink(path)


def _naming(exc: OSError, target: str) -> OSError:
    """The same error, naming the target the user asked for rather than a hidden temporary file."""
    return OSError(exc.errno, exc.strerror, target) if exc.errno is not None else exc


class _Interrupted(BaseException):
    """SIGINT or SIGTERM arrived during a publish."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


class _SignalGuard:
    """While active in the main thread: SIGINT and SIGTERM raise _Interrupted, except inside `critical()`,
    which holds them until its end; on exit the previous handlers are restored and the signal re-raised."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.previous: dict = {}
        self.depth = 0
        self.pending: Optional[int] = None

    def __enter__(self) -> "_SignalGuard":
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                old = signal.getsignal(signum)
                if old is not None and old is not signal.SIG_IGN:  # None: a handler not set from Python
                    self.previous[signum] = signal.signal(signum, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.depth:
            self.pending = signum
        else:
            raise _Interrupted(signum)

    @contextlib.contextmanager
    def critical(self):
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
        if not self.depth and self.pending is not None:
            raise _Interrupted(self.pending)

    def __exit__(self, kind, exc, traceback) -> None:
        for signum, old in self.previous.items():
            signal.signal(signum, old)
        signum = exc.signum if isinstance(exc, _Interrupted) else self.pending
        if signum is not None:
            signal.raise_signal(signum)  # the previous handler acts: by default the process ends
            raise ConversionError(f"interrupted by {signal.Signals(signum).name}") from None
