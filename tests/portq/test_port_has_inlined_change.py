"""The port already has it, written into the value it computes (issue 24, class 8;
``port-has-inlined-change``).

A C++ change that only adds ``f0 = F(f0);`` after ``f0`` is computed (a clamp of a loaded value) is
what a port computing ``float v = F(E);`` already does: ``float t = E; t = F(t);`` and
``float v = F(E);`` are one dataflow, the local read once inlined. IN_SYNC when a value the port's
definition computes (a declaration's initialiser or an assignment's right side) reads as ``F`` token
for token modulo the names of locals and parameters, upstream's one read of its target standing for a
subexpression of the port that holds no literal. Other literals, a port that lacks it, an added
statement that does not re-assign what it reads, or a port whose value around the read holds a literal
of its own stay flagged."""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC
from tests.portq.test_cpp_port_has_change import CLAMP, CLAMPED, _clamp_kernel, _clamp_port

INLINE = "        float v = fmaxf(-65504.0f, fminf(load_half(x, i), 65504.0f));\n"


def test_a_clamp_the_port_writes_into_the_loaded_value_is_in_sync(tmp_path):
    kernel = _clamp_kernel(tmp_path, CLAMP, CLAMPED, _clamp_port(INLINE))
    assert kernel.verdict == IN_SYNC, kernel.reason
    assert "port-has-inlined-change" in kernel.rules, kernel.rules
    assert "row_norm.cu:" in kernel.reason


def test_a_clamp_with_other_literals_is_flagged(tmp_path):
    other = INLINE.replace("65504.0f", "448.0f")
    assert _clamp_kernel(tmp_path, CLAMP, CLAMPED, _clamp_port(other)).verdict in FLAGGED


def test_a_port_that_lacks_the_clamp_is_flagged(tmp_path):
    lacks = "        float v = load_half(x, i);\n"
    assert _clamp_kernel(tmp_path, CLAMP, CLAMPED, _clamp_port(lacks)).verdict in FLAGGED


def test_a_clamp_around_a_value_the_port_scales_itself_is_flagged(tmp_path):
    # The port clamps load_half(x, i) * 2.0f: a literal inside what stands for upstream's f0.
    scaled = INLINE.replace("fminf(load_half(x, i), ", "fminf(load_half(x, i) * 2.0f, ")
    assert _clamp_kernel(tmp_path, CLAMP, CLAMPED, _clamp_port(scaled)).verdict in FLAGGED


def test_an_added_statement_that_does_not_reassign_what_it_reads_is_flagged(tmp_path):
    # `sum = F(f0)` overwrites another local: not the inlined form of anything the port computes.
    overwrites = CLAMP.replace("        float f0 = load_half(x, i);\n",
                               "        float f0 = load_half(x, i);\n        sum = fmaxf(-65504.0f, fminf(f0, 65504.0f));\n")
    assert _clamp_kernel(tmp_path, CLAMP, overwrites, _clamp_port(INLINE)).verdict in FLAGGED


def test_a_clamp_the_port_applies_to_another_input_is_flagged(tmp_path):
    # Upstream clamps what it loaded from x; the port clamps what it loads from its weights w: the
    # subexpression in place of upstream's read must read the same parameters, by position.
    weights = "        float v = load_half(x, i);\n" \
              "        float g = fmaxf(-65504.0f, fminf(load_half(w, i), 65504.0f));\n        v = v * g;\n"
    assert _clamp_kernel(tmp_path, CLAMP, CLAMPED, _clamp_port(weights)).verdict in FLAGGED
