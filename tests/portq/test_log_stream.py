"""The log stream's read-ahead: every byte in order, bounded, and stopped cleanly."""
from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest

from portq.upstream.history import ReadAhead, Upstream
from tests.portq.fixtures import build_sample_upstream


def test_read_ahead_gives_back_every_byte_in_order():
    data = bytes(range(256)) * 20000  # several chunks
    reader = ReadAhead(io.BufferedReader(io.BytesIO(data)), limit=2 << 20)
    chunks = []
    while chunk := reader.read1():
        chunks.append(chunk)
    reader.close()
    assert b"".join(chunks) == data and reader.read1() == b""


def test_read_ahead_stops_at_its_bound_until_read():
    data = b"x" * (8 << 20)
    reader = ReadAhead(io.BufferedReader(io.BytesIO(data)), limit=2 << 20)
    first = reader.read1()
    reader._thread.join(timeout=0.5)  # it cannot finish: the buffer is full
    assert reader._thread.is_alive() and reader._chunks.qsize() <= 2
    rest = b""
    while chunk := reader.read1():
        rest += chunk
    reader.close()
    assert first + rest == data


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    path = tmp_path_factory.mktemp("stream") / "up"
    build_sample_upstream(path)
    return path


def test_a_stream_left_after_its_first_commit_ends_git_and_its_reader(upstream):
    with Upstream(upstream) as repository:
        revisions = repository.resolve_range("base..tip")
        before = {t for t in threading.enumerate()}
        stream = repository.commits(revisions)
        first = next(stream)
        stream.close()
        assert first.sha == revisions.shas[0]
        assert {t for t in threading.enumerate()} - before == set()
        whole = list(repository.commits(revisions))
    assert [c.sha for c in whole] == list(revisions.shas)


def test_the_log_pipe_is_widened_where_the_platform_allows_it(tmp_path):
    import fcntl
    import os

    import pytest

    from portq.upstream.history import PIPE_BYTES, widen_pipe

    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("no pipe sizes on this platform")
    limit = Path("/proc/sys/fs/pipe-max-size")
    if limit.exists() and int(limit.read_text()) < PIPE_BYTES:
        pytest.skip("this machine caps pipes below PIPE_BYTES")
    reader, writer = os.pipe()
    try:
        with os.fdopen(reader, "rb") as stream:
            widen_pipe(stream)
            assert fcntl.fcntl(stream.fileno(), fcntl.F_GETPIPE_SZ) == PIPE_BYTES
    finally:
        os.close(writer)
    with open(tmp_path / "file", "wb+") as not_a_pipe:
        widen_pipe(not_a_pipe)  # refused by the kernel: nothing to do, nothing raised


def test_steps_are_taken_while_the_next_chunk_has_not_arrived_and_left_off_at_the_end():
    import os
    import time

    read_end, write_end = os.pipe()
    chunks = [b"a" * 1000, b"b" * 10, b"c" * 7]

    def write_slowly():
        with os.fdopen(write_end, "wb", buffering=0) as out:
            for chunk in chunks:
                time.sleep(0.05)
                out.write(chunk)

    taken = []

    def steps():
        for step in range(10_000_000):
            taken.append(step)
            time.sleep(0.001)
            yield

    writer = threading.Thread(target=write_slowly)
    writer.start()
    with os.fdopen(read_end, "rb") as stream:
        reader = ReadAhead(stream, while_waiting=steps())
        data = b""
        while chunk := reader.read1():
            data += chunk
        at_end = len(taken)
        assert reader.read1() == b"" and len(taken) == at_end  # no step after the log ended
        reader.close()
    writer.join()
    assert data == b"".join(chunks)
    assert 0 < at_end < 10_000_000  # steps were taken while waiting, and the rest was left off


def test_steps_that_run_out_leave_the_reader_waiting_as_before():
    data = b"x" * (3 << 20)
    reader = ReadAhead(io.BufferedReader(io.BytesIO(data)), limit=2 << 20, while_waiting=iter([None, None]))
    read = b""
    while chunk := reader.read1():
        read += chunk
    reader.close()
    assert read == data


def test_a_started_log_runs_git_before_it_is_read_and_ends_it_when_closed_unread(upstream):
    import subprocess as sp

    with Upstream(upstream) as repository:
        revisions = repository.resolve_range("base..tip")
        before = {t for t in threading.enumerate()}
        spawned = []
        real_popen = sp.Popen

        def recording(*args, **kwargs):
            spawned.append(args[0])
            return real_popen(*args, **kwargs)

        sp.Popen = recording
        try:
            stream = repository.started_commits(revisions)
        finally:
            sp.Popen = real_popen
        assert any("log" in command for command in spawned)  # git was started, nothing read yet
        stream.close()
        assert {t for t in threading.enumerate()} - before == set()
        assert [c.sha for c in repository.started_commits(revisions)] == list(revisions.shas)
