"""The demo's seed-000-shaped report (entry 4 against the stale tree): golden, every seed-000 section, shorter than before."""
from __future__ import annotations

import pytest

from portq.pipeline.demo import run_demo
from tests.portq.golden.reports.scenario import check_golden

SEED_000_SECTIONS = ("**What is wrong:**", "**Row:**", "**Found by:**", "**Upstream commit:**", "## Correction history",
                     "## What is wrong", "## Reachability", "## Why REAL_GAP", "## Size", "## What was not determined",
                     "## Done when")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return run_demo(tmp_path_factory.mktemp("demo")).report.read_text()


def test_demo_report_matches_its_golden_file(report):
    check_golden("demo_issue.md", report)


def test_demo_report_keeps_every_seed_000_section_and_is_shorter_than_the_first_one(report):
    for section in SEED_000_SECTIONS:
        assert section in report
    assert len(report.splitlines()) < 127  # the report before exact citations and folded symbols had 127 lines


def test_demo_report_tells_both_halves_the_geometry_and_the_entry_point(report):
    assert "### `vllm/model_executor/layers/attention/mla_attention.py`: NOT_APPLICABLE" in report
    assert "Declared out of scope at `mlaport/engine/chunked_context.py:16`" in report
    assert "    dim3 grid(num_tokens);" in report and "  grid = (num_tokens,)" in report
    assert "- `DeepseekV2MLAAttention.forward_prefill` in `mlaport/models/deepseek_v2.py`:" in report
    assert "compute_prefill_context` in" not in report  # the callee never stands for its caller
