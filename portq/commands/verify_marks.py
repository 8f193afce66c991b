"""A pytest plugin ``portq verify`` loads into the pytest it runs (``-p portq.commands.verify_marks``).

It records on every test carrying the ``gpu`` mark a ``portq_gpu``
property, which the junit report keeps, so verify can say per file how many
tests ran on the GPU. The junit report leaves out deselected tests, so the
plugin also counts, per file, the ``gpu``-marked tests that were deselected
(``-m "not gpu"``, ``-k``) or skipped, and writes them as JSON to the path
given with ``--portq-gpu-marks``. It imports nothing of portq and never torch.
"""

from __future__ import annotations

import json

import pytest

GPU_MARKS_OPTION = "--portq-gpu-marks"

_gpu_node_ids: set[str] = set()
_not_run: dict[str, dict[str, int]] = {}  # file -> {"gpu_deselected": n, "gpu_skipped": n}


def pytest_addoption(parser) -> None:
    parser.addoption(GPU_MARKS_OPTION, metavar="PATH", default=None,
                     help="write per-file counts of gpu-marked tests deselected or skipped to PATH (JSON)")


def _is_gpu(item) -> bool:
    return item.get_closest_marker("gpu") is not None


def _count(file: str, key: str) -> None:
    counts = _not_run.setdefault(file, {"gpu_deselected": 0, "gpu_skipped": 0})
    counts[key] += 1


@pytest.hookimpl(tryfirst=True)  # before any deselection, so every gpu-marked test is seen
def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if _is_gpu(item):
            item.user_properties.append(("portq_gpu", "1"))
            _gpu_node_ids.add(item.nodeid)


def pytest_deselected(items) -> None:
    for item in items:
        if _is_gpu(item):
            _count(item.location[0], "gpu_deselected")  # the same path the junit report names


def pytest_runtest_logreport(report) -> None:
    if report.skipped and report.nodeid in _gpu_node_ids:
        _count(report.location[0], "gpu_skipped")


def pytest_sessionfinish(session) -> None:
    path = session.config.getoption(GPU_MARKS_OPTION)
    if path:
        with open(path, "w", encoding="utf-8") as stream:
            json.dump(_not_run, stream)
