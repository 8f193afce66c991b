"""The port already has it: a value no longer carried across loop iterations (issue 24, class 8;
``port-has-uncarried-store``).

Upstream fixes a packing loop that ORed each iteration's parts into one local declared before the
loop (``unsigned char b = 0; for (...) { b |= A << 4; b |= B; out[j] = b; }``: each byte also holds
the bits of every byte before it) by building each element from its own parts in place
(``out[j] = A << 4; out[j] |= B;``). A port whose loop stores each element as ``(A' << 4) | B'``
from the iteration's own values, with nothing in that loop assigned to a local declared outside it,
already has the fix: IN_SYNC, citing the port's store. A port that still carries a local across the
iterations, whose store combines its parts otherwise (another operator or literal), or a commit that
changes anything else stays flagged.

Each runs the real ``portq scan`` over a small synthetic history."""
from __future__ import annotations

from portq.core.model import FLAGGED, IN_SYNC
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_declared_sibling import BEFORE_HEADER, HEADER, MATRIX_WITH_NORM, SOURCE

CARRIED = '''\
#include "row_norm.h"

namespace norm {

template<class T>
__global__ void RowNormKernel(unsigned char* out, const T* x, const T* weights, int dims, float eps)
{
    float vals[8];
    for (int i = 0; i < 8; i++) { vals[i] = (float)x[blockIdx.x * 8 + i]; }
    unsigned char packed = 0;
    for (int j = 0; j < 4; j++) {
        packed |= encode_code(vals[2 * j] * eps) << 4;
        packed |= encode_code(vals[2 * j + 1] * eps);
        out[blockIdx.x * 4 + j] = packed;
    }
}

template<class T>
void invokeRowNorm(unsigned char* out, const T* x, const T* weights, int dims, int num, float eps, cudaStream_t st)
{
    RowNormKernel<<<num, dims, 0, st>>>(out, x, weights, dims, eps);
}

}  // namespace norm
'''
OWN_PAIR = CARRIED.replace("    unsigned char packed = 0;\n", "").replace(
    "        packed |= encode_code(vals[2 * j] * eps) << 4;\n"
    "        packed |= encode_code(vals[2 * j + 1] * eps);\n"
    "        out[blockIdx.x * 4 + j] = packed;\n",
    "        out[blockIdx.x * 4 + j] = encode_code(vals[2 * j] * eps) << 4;\n"
    "        out[blockIdx.x * 4 + j] |= encode_code(vals[2 * j + 1] * eps);\n")

PORT_STORE = "        dst[blockIdx.x * 4 + p] = (to_code(v[2 * p] * s) << 4) | to_code(v[2 * p + 1] * s);\n"


def _port(loop: str, before: str = "") -> dict[str, str]:
    port = (
        f"// portq: ports vllm:{SOURCE}::norm::RowNormKernel\n"
        "template<class T>\n"
        "__global__ void pack_kernel(unsigned char* dst, const T* x, const T* w, int dims, float s)\n{\n"
        "    float v[8];\n    float m = 0.0f;\n"
        "    for (int i = 0; i < 8; i++) {\n        v[i] = (float)x[blockIdx.x * 8 + i];\n"
        "        m = fmaxf(m, fabsf(v[i]));\n    }\n"
        f"{before}"
        "    for (int p = 0; p < 4; p++) {\n"
        f"{loop}"
        "    }\n}\n\n"
        f"// portq: ports vllm:{SOURCE}::norm::invokeRowNorm\n"
        "template<class T>\n"
        "void pack(unsigned char* dst, const T* x, const T* w, int dims, int num, float s, cudaStream_t st)\n"
        "{\n    pack_kernel<<<num, dims, 0, st>>>(dst, x, w, dims, s);\n}\n\n"
        "void run_pack(unsigned char* dst, const float* x, const float* w, int dims, int num, cudaStream_t st)\n"
        "{\n    pack(dst, x, w, dims, num, 1.0f, st);\n}\n"
    )
    return {"kernels/kv_cache/row_norm.cu": port}


def _kernel(tmp_path, before, after, port):
    verdicts, _ = classify_history(
        tmp_path, [CommitSpec("base", files={HEADER: BEFORE_HEADER, SOURCE: before}),
                   CommitSpec("own pair", files={SOURCE: after})], port, matrix=MATRIX_WITH_NORM)
    return next(s for s in verdicts[1].symbols if s.symbol.endswith("RowNormKernel"))


def test_a_carry_the_port_never_had_is_in_sync(tmp_path):
    kernel = _kernel(tmp_path, CARRIED, OWN_PAIR, _port(PORT_STORE))
    assert kernel.verdict == IN_SYNC, kernel.reason
    assert "port-has-uncarried-store" in kernel.rules, kernel.rules
    assert "row_norm.cu:" in kernel.reason


def test_a_port_that_still_carries_the_byte_is_flagged(tmp_path):
    carries = ("        b |= to_code(v[2 * p] * s) << 4;\n        b |= to_code(v[2 * p + 1] * s);\n"
               "        dst[blockIdx.x * 4 + p] = b;\n")
    kernel = _kernel(tmp_path, CARRIED, OWN_PAIR, _port(carries, before="    unsigned char b = 0;\n"))
    assert kernel.verdict in FLAGGED, kernel.reason


def test_a_port_store_beside_a_carried_local_is_flagged(tmp_path):
    # The store is in the fixed form, but the same loop ORs into a local declared before it.
    beside = PORT_STORE + "        b |= dst[blockIdx.x * 4 + p];\n"
    kernel = _kernel(tmp_path, CARRIED, OWN_PAIR, _port(beside, before="    unsigned char b = 0;\n"))
    assert kernel.verdict in FLAGGED, kernel.reason


def test_a_port_combining_the_parts_otherwise_is_flagged(tmp_path):
    for name, store in (("shift", PORT_STORE.replace("<< 4", "<< 3")),
                        ("operator", PORT_STORE.replace(") | to_code", ") + to_code")),
                        ("one part", "        dst[blockIdx.x * 4 + p] = to_code(v[2 * p] * s);\n")):
        kernel = _kernel(tmp_path / name, CARRIED, OWN_PAIR, _port(store))
        assert kernel.verdict in FLAGGED, (name, kernel.reason)


def test_a_commit_that_also_changes_a_part_is_flagged(tmp_path):
    other = OWN_PAIR.replace("encode_code(vals[2 * j] * eps) << 4", "encode_code(vals[2 * j] * eps) << 3")
    kernel = _kernel(tmp_path, CARRIED, other, _port(PORT_STORE))
    assert kernel.verdict in FLAGGED, kernel.reason


def test_a_local_kept_after_the_loop_is_flagged(tmp_path):
    # The carried local is still read after the loop upstream: removing it changes what that read sees.
    kept = CARRIED.replace("        out[blockIdx.x * 4 + j] = packed;\n    }\n",
                           "        out[blockIdx.x * 4 + j] = packed;\n    }\n    out[0] = packed;\n")
    kernel = _kernel(tmp_path, kept, OWN_PAIR, _port(PORT_STORE))
    assert kernel.verdict in FLAGGED, kernel.reason


def test_a_port_that_still_carries_the_byte_in_another_loop_is_flagged(tmp_path):
    # One loop stores the fixed form; another still stores a local it ORs into across its iterations.
    second = ("    unsigned char b = 0;\n    for (int q = 0; q < 4; q++) {\n"
              "        b |= to_code(v[q] * s);\n        dst[64 + q] = b;\n    }\n")
    kernel = _kernel(tmp_path, CARRIED, OWN_PAIR, _port(PORT_STORE, before=second))
    assert kernel.verdict in FLAGGED, kernel.reason


def test_a_part_that_reads_the_element_it_builds_is_flagged(tmp_path):
    # `out[j] |= F(out[j])` reads the half-built element: not the two parts combined.
    reads = CARRIED.replace("packed |= encode_code(vals[2 * j + 1] * eps);",
                            "packed |= encode_code(out[blockIdx.x * 4 + j] * eps);")
    after = OWN_PAIR.replace("out[blockIdx.x * 4 + j] |= encode_code(vals[2 * j + 1] * eps);",
                             "out[blockIdx.x * 4 + j] |= encode_code(out[blockIdx.x * 4 + j] * eps);")
    kernel = _kernel(tmp_path, reads, after, _port(PORT_STORE))
    assert kernel.verdict in FLAGGED, kernel.reason
