"""A Python helper that loses a parameter (``removed-internal-parameter``) while the tree calls the port's
helper, outside tests, only from definitions that port upstream ones: the port's helper still taking it and
the port's callers still passing it are behind as a pair, wiring inside the copy; no input of an entry point
the engine calls changes, so for a reader (NEEDS_REVIEW), never REAL_GAP. Engine code calling the helper
directly keeps the gap."""
from __future__ import annotations

from portq.core.model import NEEDS_REVIEW, REAL_GAP
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

MATRIX = """\
[[row]]
id       = "BUILD"
title    = "Kernel builds"
upstream = "vllm"
paths    = ["lib/*.py"]
tree     = ["pkg/", "engine/"]
tests    = ["tests/"]
"""

BUILD_OLD = '''\
def build(name: str, keys: dict, template: str):
    return compile_source(name, template.format(**keys))
'''

BUILD_NEW = '''\
def build(name: str, keys: dict):
    return compile_source(name, generate(name, keys))
'''

HOST_OLD = '''\
from .build import build

TEMPLATE = "run<{N}>"


def run(x, out):
    kernel = build("run", {"N": x.shape[1]}, TEMPLATE)
    kernel(x, out)
'''

HOST_NEW = '''\
from .build import build


def run(x, out):
    kernel = build("run", {"N": x.shape[1]})
    kernel(x, out)
'''


def _tree(engine_calls_build: bool = False) -> dict[str, str]:
    engine = ("from pkg.host import run\nfrom pkg.build import build\n\n\ndef forward(x, out):\n"
              + ('    return build("mine", {}, "k")\n' if engine_calls_build else "    run(x, out)\n"))
    return {
        "pkg/__init__.py": "",
        "pkg/build.py": "# portq: ports vllm:lib/build.py::build\n"
                        "def build(name: str, keys: dict, template: str):\n"
                        "    return compile_source(name, template.format(**keys))\n",
        "pkg/host.py": "from .build import build\n\nTEMPLATE = \"run<{N}>\"\n\n\n"
                       "# portq: ports vllm:lib/host.py::run\n"
                       "def run(x, out):\n"
                       "    kernel = build(\"run\", {\"N\": x.shape[1]}, TEMPLATE)\n"
                       "    kernel(x, out)\n",
        "engine/__init__.py": "",
        "engine/layer.py": engine,
        "tests/test_build.py": "from pkg.build import build\n\n\ndef test_build():\n"
                               "    assert build(\"t\", {}, \"k\") is not None\n",
    }


def _build(verdict):
    return next(s for s in verdict.symbols if s.symbol == "build")


def test_a_parameter_dropped_from_a_helper_only_ports_call_is_for_a_reader(tmp_path):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={"lib/build.py": BUILD_OLD, "lib/host.py": HOST_OLD}),
                                              CommitSpec("drop", files={"lib/build.py": BUILD_NEW, "lib/host.py": HOST_NEW})],
                                   _tree(), matrix=MATRIX)
    build = _build(verdicts[1])
    assert build.verdict == NEEDS_REVIEW, build.reason
    assert "removed-internal-parameter" in build.rules, build.rules
    assert verdicts[1].verdict != REAL_GAP, verdicts[1].reason


def test_engine_code_calling_the_helper_directly_keeps_the_gap(tmp_path):
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={"lib/build.py": BUILD_OLD, "lib/host.py": HOST_OLD}),
                                              CommitSpec("drop", files={"lib/build.py": BUILD_NEW, "lib/host.py": HOST_NEW})],
                                   _tree(engine_calls_build=True), matrix=MATRIX)
    build = _build(verdicts[1])
    assert "removed-internal-parameter" not in build.rules
    assert build.verdict == REAL_GAP, build.reason


def test_engine_code_calling_the_helper_under_another_name_keeps_the_gap(tmp_path):
    tree = _tree()
    tree["engine/layer.py"] = ("from pkg.host import run\nfrom pkg.build import build as make\n\n\n"
                               "def forward(x, out):\n    return make(\"mine\", {}, \"k\")\n")
    verdicts, _ = classify_history(tmp_path, [CommitSpec("base", files={"lib/build.py": BUILD_OLD, "lib/host.py": HOST_OLD}),
                                              CommitSpec("drop", files={"lib/build.py": BUILD_NEW, "lib/host.py": HOST_NEW})],
                                   tree, matrix=MATRIX)
    build = _build(verdicts[1])
    assert "removed-internal-parameter" not in build.rules
    assert build.verdict == REAL_GAP, build.reason
