"""emit/publish.py: a conversion's files are published as one set (all new or all old), never onto an input or
onto each other; SIGINT/SIGTERM leave no temporary file; what a killed run leaves is undone by the next run.

Crashes are simulated in a forked child of the test process (it only writes files, then dies by SIGKILL or
exits with os._exit), so a conversion done once here is written many times without paying for imports.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import onnx2ttnn
from onnx2ttnn.emit import publish as publish_module
from onnx2ttnn.emit.publish import check_distinct, publish, remove_stale
from onnx2ttnn.errors import ConversionError

MLP = Path(__file__).resolve().parents[2] / "models" / "mlp.onnx"
OLD = {"m.py": b"# the old program\n", "m.npz": b"the old weights", "m_ir.onnx": b"the old IR"}


@pytest.fixture(scope="module")
def conversion():
    return onnx2ttnn.convert(str(MLP), "m.py")


def _old_set(folder: Path, ir_folder: Path) -> dict[Path, bytes]:
    files = {folder / "m.py": OLD["m.py"], folder / "m.npz": OLD["m.npz"], ir_folder / "m_ir.onnx": OLD["m_ir.onnx"]}
    for path, data in files.items():
        path.write_bytes(data)
    return files


def _state(files: dict[Path, bytes]) -> list[str]:
    """'old' / 'new' / 'missing' for each file of the set."""
    return ["missing" if not p.exists() else "old" if p.read_bytes() == data else "new" for p, data in files.items()]


def _hidden(*folders: Path) -> list[str]:
    return sorted(p.name for folder in folders for p in folder.iterdir() if p.name.startswith(".onnx2ttnn-"))


def _in_child(body) -> int:
    """Run `body()` in a forked child; returns its wait status (the child never returns into pytest)."""
    pid = os.fork()
    if pid == 0:
        try:
            body()
        except KeyboardInterrupt:
            os._exit(42)
        except BaseException:  # noqa: BLE001
            os._exit(1)
        os._exit(0)
    return os.waitpid(pid, 0)[1]


# --- a failed step leaves the old set -------------------------------------------------------------
@pytest.mark.parametrize("hard_links", [True, False], ids=["backup-by-link", "backup-by-rename"])
@pytest.mark.parametrize("failing", ["m.npz", "m.py", "m_ir.onnx"])
def test_a_failed_rename_leaves_the_old_set(conversion, tmp_path, monkeypatch, failing, hard_links):
    ir_folder = tmp_path / "ir"
    ir_folder.mkdir()
    files = _old_set(tmp_path, ir_folder)
    inodes = {p: p.stat().st_ino for p in files}
    real_replace = os.replace

    def replace(src, dst):
        if os.path.basename(dst) == failing and os.path.basename(src).startswith(".onnx2ttnn-tmp-"):
            raise OSError(28, "No space left on device", dst)
        return real_replace(src, dst)

    def no_link(*args, **kwargs):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "replace", replace)
    if not hard_links:
        monkeypatch.setattr(os, "link", no_link)
    with pytest.raises(OSError, match="No space left on device") as caught:
        conversion.write(str(tmp_path / "m.py"), ir_path=str(ir_folder / "m_ir.onnx"))
    assert os.path.basename(caught.value.filename) == failing  # the file asked for, not a hidden one
    assert _state(files) == ["old", "old", "old"]
    assert {p: p.stat().st_ino for p in files} == inodes  # the old files themselves, not copies
    assert _hidden(tmp_path, ir_folder) == []


def test_new_files_are_removed_when_there_was_no_old_set(conversion, tmp_path, monkeypatch):
    real_replace = os.replace

    def replace(src, dst):
        if os.path.basename(dst) == "m.py":
            raise OSError(5, "Input/output error", dst)
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError):
        conversion.write(str(tmp_path / "m.py"), ir_path=str(tmp_path / "m_ir.onnx"))
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_set_is_written_whole(conversion, tmp_path):
    files = _old_set(tmp_path, tmp_path)
    conversion.write(str(tmp_path / "m.py"), ir_path=str(tmp_path / "m_ir.onnx"))
    assert _state(files) == ["new", "new", "new"]
    assert (tmp_path / "m.py").read_text() == conversion.source
    assert oct((tmp_path / "m.npz").stat().st_mode & 0o777) == "0o644"
    assert _hidden(tmp_path) == []


# --- outputs are distinct from the inputs and from each other -------------------------------------
def test_check_distinct(tmp_path, monkeypatch):
    (tmp_path / "d").mkdir()
    model = tmp_path / "d" / "m.onnx"
    model.write_bytes(b"model")
    os.symlink("d", tmp_path / "alias")
    os.link(model, tmp_path / "hard.py")
    inputs = [("the model", str(model))]
    same = [f"{tmp_path}/d/./m.onnx", str(tmp_path / "alias" / "m.onnx"), str(tmp_path / "hard.py")]
    for path in same:
        with pytest.raises(ConversionError, match="is the same file as the model"):
            check_distinct(inputs, [("the program", path)])
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConversionError, match="'b/../x.py' is the same file as the program 'x.py'"):
        check_distinct([], [("the program", "x.py"), ("the IR", "b/../x.py")])  # neither exists yet
    check_distinct(inputs, [("the program", str(tmp_path / "d" / "m.py")), ("the IR", str(tmp_path / "m.onnx"))])


def test_publishing_nothing_writes_nothing(tmp_path):
    publish({})
    assert list(tmp_path.iterdir()) == []


def test_publish_refuses_one_path_twice(tmp_path):
    with pytest.raises(ConversionError, match="same file"):
        publish({str(tmp_path / "a"): b"1", f"{tmp_path}/./a": b"2"})
    assert list(tmp_path.iterdir()) == []


# --- signals --------------------------------------------------------------------------------------
@pytest.mark.parametrize("signum,status", [(signal.SIGTERM, "signal"), (signal.SIGINT, "KeyboardInterrupt")])
def test_a_signal_during_the_write_leaves_the_old_set_and_no_temporary_file(conversion, tmp_path, signum, status):
    """The child's disk is slow (fsync blocks): the signal arrives while the data is being written."""
    files = _old_set(tmp_path, tmp_path)
    ready_r, ready_w = os.pipe()

    def body():
        os.close(ready_r)
        # the handlers of an interactive run: a shell starting pytest in the background without job control
        # (`cmd &` in a script, as CI runners may) leaves SIGINT ignored, and an ignored signal is not the case here
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

        def slow_fsync(fd):
            os.write(ready_w, b"x")
            threading.Event().wait(60)

        os.fsync = slow_fsync
        conversion.write(str(tmp_path / "m.py"), ir_path=str(tmp_path / "m_ir.onnx"))

    pid = os.fork()
    if pid == 0:
        try:
            body()
        except KeyboardInterrupt:
            os._exit(42)
        except BaseException:  # noqa: BLE001
            os._exit(1)
        os._exit(0)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"x", "the child never started writing"
    os.kill(pid, signum)
    wait = os.waitpid(pid, 0)[1]
    if status == "signal":  # the default SIGTERM handler, restored and re-raised, ended the process
        assert os.WIFSIGNALED(wait) and os.WTERMSIG(wait) == signum
    else:  # Python's SIGINT handler, restored and re-raised, raised KeyboardInterrupt
        assert os.WIFEXITED(wait) and os.WEXITSTATUS(wait) == 42
    assert _state(files) == ["old", "old", "old"]
    assert _hidden(tmp_path) == []


def test_the_previous_handlers_come_back(tmp_path):
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    publish({str(tmp_path / "a"): b"1"})
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before
    errors = []
    thread = threading.Thread(target=lambda: errors.append(publish({str(tmp_path / "b"): "2"})))
    thread.start()
    thread.join()
    assert errors == [None] and (tmp_path / "b").read_text() == "2"  # no signal handler outside the main thread


# --- what killed runs leave -----------------------------------------------------------------------
def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_files_of_dead_runs_are_removed_and_nothing_else(tmp_path):
    dead, alive = _dead_pid(), os.getppid()
    stale = [f".onnx2ttnn-tmp-{dead}-0123456789abcdef", f".onnx2ttnn-old-{dead}-0123456789abcdee",
             f".onnx2ttnn-set-{dead}-0123456789abcded",  # a journal cut short: not JSON
             f".onnx2ttnn-tmp-{os.getpid()}-0123456789abcdec"]  # this pid, but not a file this process uses
    kept = [f".onnx2ttnn-tmp-{alive}-0123456789abcdef",  # a run still going
            ".onnx2ttnn-k3j2_x9a", f".onnx2ttnn-tmp-{dead}-xyz", f".onnx2ttnn-log-{dead}-0123456789abcdef", "m.py"]
    for name in stale + kept:
        (tmp_path / name).write_bytes(b"x" * 100)
    publish({str(tmp_path / "new.py"): b"new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept + ["new.py"])


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a file to another user")
def test_another_users_stale_files_are_left_alone(tmp_path):
    name = tmp_path / f".onnx2ttnn-tmp-{_dead_pid()}-0123456789abcdef"
    name.write_bytes(b"x")
    os.chown(name, 65534, 65534)
    assert remove_stale(str(tmp_path)) == [] and name.exists()


def test_a_planted_journal_cannot_move_other_files(tmp_path):
    """A journal naming files that are not of its own set is removed without acting on it."""
    victim, bait = tmp_path / "victim.txt", tmp_path / "bait.txt"
    victim.write_text("victim")
    bait.write_text("bait")
    dead = _dead_pid()
    journal = tmp_path / f".onnx2ttnn-set-{dead}-0123456789abcdef"
    journal.write_text(json.dumps({"journals": [str(journal)], "entries": [
        {"target": str(victim), "temp": str(tmp_path / f".onnx2ttnn-tmp-{dead}-0123456789abcdee"),
         "backup": str(bait), "new": [victim.stat().st_dev, victim.stat().st_ino]}]}))
    remove_stale(str(tmp_path))
    assert victim.read_text() == "victim" and bait.read_text() == "bait" and not journal.exists()


def _kill_self_after(function_name: str, count: int, match: str = ""):
    """Patch os.<function_name> so that the process SIGKILLs itself right after the count-th matching call."""
    real, calls = getattr(os, function_name), []

    def patched(path, *rest, **kwargs):
        result = real(path, *rest, **kwargs)
        if match in os.path.basename(str(rest[0] if function_name == "replace" else path)):
            calls.append(path)
            if len(calls) == count:
                os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(os, function_name, patched)


@pytest.mark.parametrize("renames,after", [(1, "old"), (2, "old"), (3, "new")])
def test_sigkill_in_the_rename_window_is_undone_by_the_next_run(conversion, tmp_path, renames, after):
    """Killed after 1 or 2 of the 3 renames: the next publish into either folder of the set puts the old set
    back; killed after the 3rd (before the journals are removed) it keeps the new set, which is whole. Either
    way it removes every file the killed run left."""
    ir_folder = tmp_path / "ir"
    ir_folder.mkdir()
    files = _old_set(tmp_path, ir_folder)
    wait = _in_child(lambda: (_kill_self_after("replace", renames),
                              conversion.write(str(tmp_path / "m.py"), ir_path=str(ir_folder / "m_ir.onnx"))))
    assert os.WIFSIGNALED(wait) and os.WTERMSIG(wait) == signal.SIGKILL
    assert _state(files).count("new") == renames  # killed inside the window: a mix on disk until the next run
    assert _hidden(tmp_path, ir_folder)
    publish({str(ir_folder / "other.txt"): b"other"})  # the next run, into the folder of the IR only
    assert _state(files) == [after] * 3
    assert _hidden(tmp_path, ir_folder) == []


def test_sigkill_after_the_commit_is_final_keeps_the_new_set(conversion, tmp_path):
    """Killed after the primary journal is deleted (the set is final) but before the rest of the clean-up."""
    ir_folder = tmp_path / "ir"
    ir_folder.mkdir()
    files = _old_set(tmp_path, ir_folder)
    wait = _in_child(lambda: (_kill_self_after("unlink", 1, ".onnx2ttnn-set-"),
                              conversion.write(str(tmp_path / "m.py"), ir_path=str(ir_folder / "m_ir.onnx"))))
    assert os.WIFSIGNALED(wait)
    assert _state(files) == ["new", "new", "new"]
    publish({str(ir_folder / "other.txt"): b"other"})  # the secondary journal's folder: its primary is gone
    publish({str(tmp_path / "other.txt"): b"other"})
    assert _state(files) == ["new", "new", "new"]
    assert _hidden(tmp_path, ir_folder) == []


def test_own_pid_files_in_use_are_not_stale(tmp_path):
    path = str(tmp_path / f".onnx2ttnn-tmp-{os.getpid()}-0123456789abcdef")
    Path(path).write_bytes(b"x")
    publish_module._MINE.add(path)
    try:
        assert remove_stale(str(tmp_path)) == [] and os.path.exists(path)
    finally:
        publish_module._MINE.discard(path)
    assert remove_stale(str(tmp_path)) == [path] and not os.path.exists(path)
