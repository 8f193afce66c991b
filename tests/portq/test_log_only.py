"""Statements that only emit a log record (rule ``log-only``): a
``logging.debug("...")`` call, or one on a module-level logger
(``logger = logging.getLogger(__name__)``), with ``import logging``, added to
or changed in a ported definition or the lines outside definitions, compute
nothing the port returns or launches: the definition is the same program
without them, so cosmetic. A log call whose arguments call something (a
device sync, a side effect), a receiver that is not a logger, or any other
change beside it, stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_moved_definitions import MATRIX, TREE, norm_module

BASE = norm_module()
DEBUG = BASE.replace("def norm(x, w):\n", "def norm(x, w):\n    import logging\n\n    logging.debug(\"GEMS NORM\")\n")
LOGGER = BASE.replace("import triton.language as tl\n", "import triton.language as tl\nimport logging\n\n"
                      "logger = logging.getLogger(__name__)\n").replace(
    "def norm(x, w):\n", "def norm(x, w):\n    logger.debug(\"GEMS NORM %s\", x.shape)\n")
# Unsound neighbours.
SYNCING = DEBUG.replace("logging.debug(\"GEMS NORM\")", "logging.debug(\"GEMS NORM %s\", x.sum().item())")
NOT_A_LOGGER = BASE.replace("import triton.language as tl\n", "import triton.language as tl\n\n"
                            "logger = make_recorder()\n").replace(
    "def norm(x, w):\n", "def norm(x, w):\n    logger.debug(\"GEMS NORM\")\n")
AND_A_CHANGE = DEBUG.replace("torch.empty_like(x)", "torch.zeros_like(x)")


def _later(tmp_path, after):
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/norm.py": BASE}),
        CommitSpec("log", files={"ops/norm.py": after}),
    ], TREE, matrix=MATRIX)
    return verdicts[1]


def test_a_debug_log_line_and_its_import_are_cosmetic(tmp_path):
    verdict = _later(tmp_path, DEBUG)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert "log-only" in verdict.rules, verdict.rules


def test_a_module_level_logger_and_its_use_are_cosmetic(tmp_path):
    verdict = _later(tmp_path, LOGGER)
    assert (verdict.verdict, verdict.justification) == (NOT_APPLICABLE, "cosmetic"), verdict.reason
    assert "log-only" in verdict.rules, verdict.rules


def test_a_log_call_whose_arguments_call_something_is_still_flagged(tmp_path):
    verdict = _later(tmp_path, SYNCING)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "log-only" not in verdict.rules


def test_a_receiver_that_is_not_a_logger_is_still_flagged(tmp_path):
    verdict = _later(tmp_path, NOT_A_LOGGER)
    assert verdict.verdict in FLAGGED, verdict.reason


def test_a_log_line_beside_a_real_change_is_still_flagged(tmp_path):
    verdict = _later(tmp_path, AND_A_CHANGE)
    assert verdict.verdict in FLAGGED, verdict.reason
