"""Generate a synthetic upstream history for benchmarking ``portq scan``.

``python benchmarks/synthetic_history.py OUT_DIR [--commits 2000] [--seed 0]``
builds, with one ``git fast-import`` stream (seconds, not minutes):

- ``OUT_DIR/upstream``: a git repository whose first-parent history from tag
  ``base`` to tag ``tip`` has ``--commits`` entries: CUDA/C++ and
  Python/Triton sources, docs and CI files, edited a few at a time (body
  edits, new functions, signature changes), with a merge of a two-commit
  side branch every 50 entries, a rename every 200 and a binary blob every
  150;
- ``OUT_DIR/matrix.toml``: three rows owning about a fifth of the sources by
  path and a few symbols by name;
- ``OUT_DIR/tree``: a small in-tree port with anchors naming some upstream
  symbols.

``--density vllm`` builds instead the shape of real vLLM history, for
scaling runs (``bench_scale.py``): a few percent of first-parent commits
touch the files a row owns (three CUDA/C++ files that start at ~1,200 lines
and grow as kernels are added, and two Python files); the rest edit, add
and now and then rename some of ~600 small files no row owns (models,
tests, docs, CI); a merge every 500 entries. The stream goes to
``git fast-import`` as it is generated, so 30,000 commits take seconds.

Same arguments, same SHAs. The script only generates; ``bench_scan.py`` and
``bench_scale.py`` measure.
"""

from __future__ import annotations

import argparse
import random
import subprocess
from pathlib import Path

EPOCH = 1735689600  # 2025-01-01T00:00:00Z
CUDA_FILES = 24
PYTHON_FILES = 24
FUNCTIONS_PER_FILE = 12


def cuda_function(index: int, variant: int, stem: str) -> list[str]:
    name = f"{stem}_kernel_{index}"
    if index % 3 == 0:
        return [
            "template <typename scalar_t>",
            f"__global__ void {name}(const scalar_t* __restrict__ src, scalar_t* __restrict__ dst,",
            f"                       const int64_t n, const int stride_{variant % 4}) {{",
            "  const int64_t i = blockIdx.x * blockDim.x + threadIdx.x;",
            "  if (i >= n) return;",
            f"  dst[i] = src[i * stride_{variant % 4}] + static_cast<scalar_t>({variant});",
            "}",
            "",
        ]
    return [
        f"void {name}(torch::Tensor& src, torch::Tensor& dst) {{",
        "  const int64_t n = src.numel();",
        f"  dim3 grid((n + {64 << (variant % 3)} - 1) / {64 << (variant % 3)});",
        f"  // revision {variant}",
        "  TORCH_CHECK(src.is_contiguous());",
        "}",
        "",
    ]


def python_function(index: int, variant: int, stem: str) -> list[str]:
    if index % 4 == 0:
        return [
            "@triton.jit",
            f"def _{stem}_kernel_{index}(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):",
            "    pid = tl.program_id(0)",
            "    offsets = pid * BLOCK + tl.arange(0, BLOCK)",
            "    mask = offsets < n",
            f"    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=mask) + {variant}, mask=mask)",
            "",
            "",
        ]
    return [
        f"def {stem}_op_{index}(src, dst, block={64 << (variant % 3)}):",
        f'    """Operation {index}, revision {variant}."""',
        "    n = src.numel()",
        f"    _{stem}_kernel_{index - index % 4}[(n + block - 1) // block,](src, dst, n, BLOCK=block)",
        "    return dst",
        "",
        "",
    ]


class SourceFile:
    """One generated source file: a header and FUNCTIONS_PER_FILE definitions."""

    def __init__(self, path: str, language: str, stem: str) -> None:
        self.path = path
        self.stem = stem  # keeps definition names distinct across files, as in a real tree
        self.language = language
        self.variants = [0] * FUNCTIONS_PER_FILE
        self.extra = 0  # functions appended later

    def render(self) -> bytes:
        if self.language == "cuda":
            lines = ["#include <torch/all.h>", "", "namespace vllm {", ""]
            make = cuda_function
        else:
            lines = ["import triton", "import triton.language as tl", "", ""]
            make = python_function
        for index, variant in enumerate(self.variants):
            lines += make(index, variant, self.stem)
        for extra in range(self.extra):
            lines += make(FUNCTIONS_PER_FILE + extra * 4 + 1, extra, self.stem)
        if self.language == "cuda":
            lines += ["}  // namespace vllm", ""]
        return "\n".join(lines).encode()


def new_repository(out: Path) -> Path:
    """An empty repository at ``out/upstream`` for a generated history."""
    repo = out / "upstream"
    repo.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "--initial-branch=main", str(repo)], check=True)
    return repo


def generate(out: Path, commits: int = 2000, seed: int = 0) -> dict[str, str]:
    rng = random.Random(seed)
    repo = new_repository(out)
    files: dict[str, SourceFile] = {}
    for i in range(CUDA_FILES):
        path = f"csrc/{'attention/' if i % 2 else ''}ops_{i}.cu"
        files[path] = SourceFile(path, "cuda", f"ops{i}")
    for i in range(PYTHON_FILES):
        path = f"vllm/{'v1/attention/' if i % 2 else 'model_executor/'}module_{i}.py"
        files[path] = SourceFile(path, "python", f"module{i}")
    docs = {"README.md": "readme\n", ".github/workflows/ci.yml": "on: push\n", "docs/ops.md": "ops\n"}

    stream: list[bytes] = []
    mark = 0
    time = EPOCH

    def data(payload: bytes) -> bytes:
        return b"data %d\n" % len(payload) + payload + b"\n"

    def commit(branch: str, message: str, operations: list[bytes], parents: list[str]) -> str:
        nonlocal mark, time
        mark += 1
        time += 60
        author = b"Synthetic Developer <dev@synthetic.invalid> %d +0000\n" % time
        stream.append(b"commit refs/heads/" + branch.encode() + b"\n")
        stream.append(b"mark :%d\n" % mark)
        stream.append(b"author " + author + b"committer " + author)
        stream.append(data(message.encode()))
        for index, parent in enumerate(parents):
            stream.append((b"from " if index == 0 else b"merge ") + parent.encode() + b"\n")
        stream.extend(operations)
        return f":{mark}"

    def modify(path: str, payload: bytes) -> bytes:
        return b"M 100644 inline " + path.encode() + b"\n" + data(payload)

    def edit_random_files(count: int) -> tuple[list[bytes], str]:
        operations, touched = [], []
        for path in rng.sample(sorted(files), count):
            source = files[path]
            if rng.random() < 0.1:
                source.extra += 1
            else:
                source.variants[rng.randrange(FUNCTIONS_PER_FILE)] += 1
            operations.append(modify(path, source.render()))
            touched.append(path.rsplit("/", 1)[-1])
        if rng.random() < 0.15:
            name = rng.choice(sorted(docs))
            docs[name] += f"line {len(docs[name])}\n"
            operations.append(modify(name, docs[name].encode()))
        return operations, ", ".join(touched)

    initial = [modify(path, source.render()) for path, source in files.items()]
    initial += [modify(name, text.encode()) for name, text in docs.items()]
    head = commit("main", "Initial import", initial, [])
    stream.append(b"reset refs/tags/base\nfrom " + head.encode() + b"\n\n")
    entry = 0
    while entry < commits:
        entry += 1
        if entry % 50 == 0:
            side = head
            for step in range(2):
                operations, touched = edit_random_files(1)
                side = commit("side", f"[Side] step {step} on {touched}", operations, [side])
            head = commit("main", f"Merge branch 'side' (#{10000 + entry})", [], [head, side])
            continue
        if entry % 200 == 0:
            old = rng.choice(sorted(p for p in files if p.endswith(".py")))
            new = old.replace("module_", "renamed_module_")
            files[new] = files.pop(old)
            files[new].path = new
            operations = [b"R " + old.encode() + b" " + new.encode() + b"\n"]
            head = commit("main", f"[Refactor] Rename {old} (#{10000 + entry})", operations, [head])
            continue
        if entry % 150 == 0:
            payload = bytes(rng.randrange(256) for _ in range(512))
            head = commit("main", f"Add table {entry}", [modify(f"csrc/attention/table_{entry}.bin", payload)], [head])
            continue
        operations, touched = edit_random_files(rng.choice((1, 1, 2, 3)))
        head = commit("main", f"[Kernel] Update {touched} (#{10000 + entry})", operations, [head])
    stream.append(b"reset refs/tags/tip\nfrom " + head.encode() + b"\n\n")
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(stream), check=True)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)

    owned_cuda = sorted(p for p in files if p.endswith(".cu"))[:5]
    owned_python = sorted(p for p in files if p.endswith(".py"))[:5]
    (out / "matrix.toml").write_text(
        "[[row]]\n"
        'id = "BENCH-CUDA"\nupstream = "upstream"\n'
        f"paths = {owned_cuda!r}\n".replace("'", '"')
        + 'symbols = ["ops2_kernel_3", "ops7_kernel_4"]\ntree = ["ops/"]\n\n'
        "[[row]]\n"
        'id = "BENCH-PY"\nupstream = "upstream"\n'
        f"paths = {owned_python!r}\n".replace("'", '"')
        + 'symbols = ["module9_op_5", "_module11_kernel_8"]\ntree = ["ops/"]\n\n'
        "[[row]]\n"
        'id = "BENCH-ATTN"\nupstream = "upstream"\n'
        'paths = ["csrc/attention/ops_1.cu", "vllm/v1/attention/module_1.py"]\n'
        'exclude = ["csrc/**/*.bin"]\ntree = ["ops/"]\n'
    )
    tree = out / "tree" / "ops"
    tree.mkdir(parents=True, exist_ok=True)
    port_lines = []
    anchored = [(owned_cuda[0], "kernel_3"), (owned_python[0], "op_5"), (owned_python[1], "op_9")]
    for number, (path, suffix) in enumerate(anchored):
        port_lines += [
            f"# portq: ports upstream:{path}::{files[path].stem}_{suffix}",
            f"def ported_{number}(src, dst, block=64):",
            "    return dst",
            "",
            "",
        ]
    (tree / "ports.py").write_text("\n".join(port_lines))
    (tree / "caller.py").write_text("from ops.ports import ported_0\n\n\ndef run(x):\n    return ported_0(x, x)\n")
    return {"upstream": str(repo), "matrix": str(out / "matrix.toml"), "tree": str(out / "tree")}


OWNED_SHARE = 0.03
"""Share of first-parent commits of a vLLM-density history that touch owned files."""


def generate_vllm_density(out: Path, commits: int = 2000, seed: int = 0) -> dict[str, str]:
    """A history of ``commits`` first-parent entries with vLLM's density (see the module docstring)."""
    rng = random.Random(seed)
    repo = new_repository(out)
    owned: dict[str, SourceFile] = {}
    for i, path in enumerate(("csrc/cache_kernels.cu", "csrc/attention/attention_kernels.cu", "csrc/ops.cu")):
        owned[path] = SourceFile(path, "cuda", f"cache{i}")
        owned[path].extra = 150  # large from the start: ~1,200 lines
    for i, path in enumerate(("vllm/attention/ops/paged.py", "vllm/v1/attention/backends/mla/utils.py")):
        owned[path] = SourceFile(path, "python", f"mla{i}")
    others: dict[str, int] = {}  # path -> revision of a small file no row owns
    for i in range(600):
        folder = ("vllm/model_executor/models", "tests/models", "docs/source", "vllm/entrypoints",
                  ".github/workflows", "benchmarks")[i % 6]
        others[f"{folder}/file_{i}.{'md' if folder.startswith('docs') else 'py'}"] = 0
    process = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=repo, stdin=subprocess.PIPE)
    write = process.stdin.write
    state = {"mark": 0, "time": EPOCH}

    def small(path: str) -> bytes:
        revision = others[path]
        body = "".join(f"def helper_{n}(x):\n    return x + {revision + n}\n\n\n" for n in range(8))
        return f"# {path}, revision {revision}\n\n{body}".encode()

    def modify(path: str, payload: bytes) -> bytes:
        return b"M 100644 inline " + path.encode() + b"\n" + b"data %d\n" % len(payload) + payload + b"\n"

    def commit(branch: str, message: str, operations: list[bytes], parents: list[str]) -> str:
        state["mark"] += 1
        state["time"] += 60
        author = b"Synthetic Developer <dev@synthetic.invalid> %d +0000\n" % state["time"]
        text = message.encode()
        write(b"commit refs/heads/" + branch.encode() + b"\nmark :%d\n" % state["mark"])
        write(b"author " + author + b"committer " + author + b"data %d\n" % len(text) + text + b"\n")
        for index, parent in enumerate(parents):
            write((b"from " if index == 0 else b"merge ") + parent.encode() + b"\n")
        for operation in operations:
            write(operation)
        write(b"\n")
        return f":{state['mark']}"

    def edit_others(count: int) -> list[bytes]:
        operations = []
        for path in rng.sample(sorted(others), count):
            others[path] += 1
            operations.append(modify(path, small(path)))
        return operations

    initial = [modify(path, source.render()) for path, source in owned.items()]
    initial += [modify(path, small(path)) for path in others]
    head = commit("main", "Initial import", initial, [])
    write(b"reset refs/tags/base\nfrom " + head.encode() + b"\n\n")
    for entry in range(1, commits + 1):
        if entry % 500 == 0:
            side = commit("side", "[Side] work on a model", edit_others(2), [head])
            head = commit("main", f"Merge branch 'side' (#{20000 + entry})", [], [head, side])
            continue
        if rng.random() < OWNED_SHARE:
            path = rng.choice(sorted(owned))
            source = owned[path]
            if rng.random() < 0.3:
                source.extra += 1  # a new kernel: the file grows
            else:
                source.variants[rng.randrange(FUNCTIONS_PER_FILE)] += 1
            operations = [modify(path, source.render())] + edit_others(rng.choice((0, 0, 1)))
            head = commit("main", f"[Kernel] Update {path.rsplit('/', 1)[-1]} (#{20000 + entry})", operations, [head])
            continue
        if entry % 1000 == 0:
            old = rng.choice(sorted(p for p in others if p.endswith(".py")))
            new = old.replace("file_", "moved_file_")
            others[new] = others.pop(old)
            head = commit("main", f"[Refactor] Move {old} (#{20000 + entry})",
                          [b"R " + old.encode() + b" " + new.encode() + b"\n"], [head])
            continue
        if entry % 97 == 0:
            path = f"vllm/model_executor/models/new_model_{entry}.py"
            others[path] = 0
            head = commit("main", f"[Model] Add model {entry} (#{20000 + entry})", [modify(path, small(path))], [head])
            continue
        operations = edit_others(rng.choice((1, 1, 2, 3)))
        head = commit("main", f"[Misc] Update models and docs (#{20000 + entry})", operations, [head])
    write(b"reset refs/tags/tip\nfrom " + head.encode() + b"\n\n")
    process.stdin.close()
    if process.wait() != 0:
        raise SystemExit("git fast-import failed")
    cuda = sorted(p for p in owned if p.endswith(".cu"))
    python = sorted(p for p in owned if p.endswith(".py"))
    (out / "matrix.toml").write_text(
        '[[row]]\nid = "BENCH-CACHE"\nupstream = "upstream"\n'
        f"paths = {cuda!r}\n".replace("'", '"') + 'symbols = ["mla1_op_5"]\ntree = ["ops/"]\n\n'
        '[[row]]\nid = "BENCH-MLA"\nupstream = "upstream"\n'
        f"paths = {python!r}\n".replace("'", '"') + 'tree = ["ops/"]\n'
    )
    tree = out / "tree" / "ops"
    tree.mkdir(parents=True, exist_ok=True)
    anchored = [(cuda[0], owned[cuda[0]].stem + "_kernel_3"), (cuda[1], owned[cuda[1]].stem + "_kernel_1"),
                (python[0], owned[python[0]].stem + "_op_5")]
    port_lines = []
    for number, (path, symbol) in enumerate(anchored):
        port_lines += [f"# portq: ports upstream:{path}::{symbol}", f"def ported_{number}(src, dst, block=64):",
                       "    return dst", "", ""]
    (tree / "ports.py").write_text("\n".join(port_lines))
    (tree / "caller.py").write_text("from ops.ports import ported_0\n\n\ndef run(x):\n    return ported_0(x, x)\n")
    return {"upstream": str(repo), "matrix": str(out / "matrix.toml"), "tree": str(out / "tree")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--density", choices=("dense", "vllm"), default="dense",
                        help="dense: every commit touches sources; vllm: a few percent touch owned files")
    args = parser.parse_args()
    make = generate_vllm_density if args.density == "vllm" else generate
    paths = make(args.out, args.commits, args.seed)
    for key, value in paths.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
