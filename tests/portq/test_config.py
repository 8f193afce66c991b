"""portq.toml discovery and the flags that override it."""
from __future__ import annotations

from pathlib import Path

import pytest

from portq.core.config import load_config, require_tree
from portq.core.errors import ConfigError

REPO_ROOT = Path(__file__).resolve().parents[2]


def write_config(directory: Path, text: str) -> Path:
    path = directory / "portq.toml"
    path.write_text(text)
    return path


def test_repository_config_names_its_upstreams_and_the_corpus_ones():
    config = load_config(cwd=REPO_ROOT)
    assert config.config_path == REPO_ROOT / "portq.toml"
    assert config.upstreams == {
        "vllm": (REPO_ROOT / "../vllm").resolve(),
        "aiter": (REPO_ROOT / "../aiter").resolve(),
        # Only the accuracy corpus (benchmarks/accuracy.py) scans these.
        "liger": (REPO_ROOT / "../Liger-Kernel").resolve(),
        "flashattn": (REPO_ROOT / "../flash-attention").resolve(),
        "unsloth": (REPO_ROOT / "../unsloth").resolve(),
        "flaggems": (REPO_ROOT / "../flaggems").resolve(),
        "lightllm": (REPO_ROOT / "../lightllm").resolve(),
        "lmdeploy": (REPO_ROOT / "../lmdeploy").resolve(),
        "flashinfer": (REPO_ROOT / "../flashinfer").resolve(),
        "torchao": (REPO_ROOT / "../torchao").resolve(),
        "quack": (REPO_ROOT / "../quack").resolve(),
        "exllamav2": (REPO_ROOT / "../exllamav2").resolve(),
        "bitsandbytes": (REPO_ROOT / "../bitsandbytes").resolve(),
        "xformers": (REPO_ROOT / "../xformers").resolve(),
        "transformerengine": (REPO_ROOT / "../transformerengine").resolve(),
        "gptqmodel": (REPO_ROOT / "../gptqmodel").resolve(),
        "deepspeed": (REPO_ROOT / "../deepspeed").resolve(),
        "fbgemm": (REPO_ROOT / "../fbgemm").resolve(),
        "apex": (REPO_ROOT / "../apex").resolve(),
        "trident": (REPO_ROOT / "../trident").resolve(),
        "lightseq": (REPO_ROOT / "../lightseq").resolve(),
        "cutekernels": (REPO_ROOT / "../cutekernels").resolve(),
        "ctranslate2": (REPO_ROOT / "../ctranslate2").resolve(),
        "attorch": (REPO_ROOT / "../attorch").resolve(),
        "causalconv1d": (REPO_ROOT / "../causal-conv1d").resolve(),
        "sageattention": (REPO_ROOT / "../SageAttention").resolve(),
        "flagattention": (REPO_ROOT / "../FlagAttention").resolve(),
        "ringflashattn": (REPO_ROOT / "../ring-flash-attention").resolve(),
        "kernl": (REPO_ROOT / "../kernl").resolve(),
        "spargeattn": (REPO_ROOT / "../spargeattn").resolve(),
        "minference": (REPO_ROOT / "../minference").resolve(),
        "llmawq": (REPO_ROOT / "../llmawq").resolve(),
        "flashmla": (REPO_ROOT / "../flashmla").resolve(),
        "deepgemm": (REPO_ROOT / "../deepgemm").resolve(),
        "exllama": (REPO_ROOT / "../exllama").resolve(),
        "gemlite": (REPO_ROOT / "../gemlite-scan").resolve(),
        "gptqllama": (REPO_ROOT / "../gptq-llama").resolve(),
        "autoawq": (REPO_ROOT / "../autoawq-scan").resolve(),
    }
    assert config.matrix_path == REPO_ROOT / "matrix" / "kernel-matrix.toml"


def test_config_is_found_in_nearest_ancestor_and_paths_are_relative_to_it(tmp_path):
    write_config(tmp_path, 'tree = "port"\nledger = "l.sqlite"\n[upstream.up]\npath = "../up"\n')
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    config = load_config(cwd=nested)
    assert config.root == tmp_path
    assert config.tree == tmp_path / "port"
    assert config.ledger_path == tmp_path / "l.sqlite"
    assert config.upstreams["up"] == (tmp_path / "../up").resolve()


def test_without_config_the_working_directory_is_the_root(tmp_path):
    config = load_config(cwd=tmp_path)
    assert config.config_path is None
    assert config.tree == tmp_path
    assert config.ledger_path == tmp_path / ".portq" / "ledger.sqlite"


def test_flags_override_config_relative_to_working_directory(tmp_path):
    write_config(tmp_path, 'tree = "port"\n')
    (tmp_path / "sub").mkdir()
    config = load_config(cwd=tmp_path / "sub", tree="t", matrix="m.toml", ledger="x.sqlite")
    assert (config.tree, config.matrix_path, config.ledger_path) == (
        tmp_path / "sub" / "t",
        tmp_path / "sub" / "m.toml",
        tmp_path / "sub" / "x.sqlite",
    )


def test_upstream_name_equals_path_sets_and_selects_it(tmp_path):
    write_config(tmp_path, '[upstream.a]\npath = "a"\n[upstream.b]\npath = "b"\n')
    config = load_config(cwd=tmp_path, upstream=["b=elsewhere"])
    assert config.resolve_upstream(["a", "b"]) == ("b", tmp_path / "elsewhere")


def test_upstream_name_selects_a_configured_upstream(tmp_path):
    write_config(tmp_path, '[upstream.a]\npath = "a"\n[upstream.b]\npath = "b"\n')
    config = load_config(cwd=tmp_path, upstream=["a"])
    assert config.resolve_upstream(["a", "b"]) == ("a", tmp_path / "a")


def test_bare_upstream_path_goes_to_the_single_matrix_upstream(tmp_path):
    config = load_config(cwd=tmp_path, upstream=["clone"])
    assert config.resolve_upstream(["vllm", "vllm"]) == ("vllm", tmp_path / "clone")


def test_bare_upstream_path_with_several_matrix_upstreams_is_an_error(tmp_path):
    config = load_config(cwd=tmp_path, upstream=["clone"])
    with pytest.raises(ConfigError, match=r"matrix names several upstreams \(vllm, aiter\); write --upstream NAME=PATH"):
        config.resolve_upstream(["vllm", "aiter"])


def test_several_configured_upstreams_need_a_choice(tmp_path):
    write_config(tmp_path, '[upstream.a]\npath = "a"\n[upstream.b]\npath = "b"\n')
    with pytest.raises(ConfigError, match=r"several upstreams are configured \(a, b\): pick one with --upstream NAME"):
        load_config(cwd=tmp_path).resolve_upstream(["a", "b"])


def test_no_upstream_at_all_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="no upstream is configured"):
        load_config(cwd=tmp_path).resolve_upstream(["vllm"])


@pytest.mark.parametrize(
    "text, expected",
    [
        ("tree = \n", r"portq\.toml:1: invalid TOML"),
        ("trees = 'x'\n", r"unknown key 'trees'"),
        ("[upstream.a]\nurl = 'x'\n", r"\[upstream\.a\] has unknown key 'url'"),
        ("[upstream.a]\n", r"\[upstream\.a\] needs path"),
        ("tree = 3\n", r"'tree' must be a non-empty string path"),
    ],
)
def test_malformed_config_is_a_one_line_error(tmp_path, text, expected):
    write_config(tmp_path, text)
    with pytest.raises(ConfigError, match=expected):
        load_config(cwd=tmp_path)


def test_missing_tree_is_an_error(tmp_path):
    config = load_config(cwd=tmp_path, tree="missing")
    with pytest.raises(ConfigError, match=r"tree .*missing does not exist"):
        require_tree(config)


def test_one_upstream_given_two_paths_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match=r"--upstream vllm=y: upstream vllm was already given as .*/x; give each upstream one path"):
        load_config(cwd=tmp_path, upstream=["vllm=x", "vllm=y"])


def test_two_upstream_choices_are_an_error(tmp_path):
    write_config(tmp_path, '[upstream.a]\npath = "a"\n[upstream.b]\npath = "b"\n')
    with pytest.raises(ConfigError, match=r"--upstream b: a second upstream choice \(a was chosen first\)"):
        load_config(cwd=tmp_path, upstream=["a", "b"])


def test_the_same_upstream_path_given_twice_is_fine(tmp_path):
    config = load_config(cwd=tmp_path, upstream=["vllm=x", "vllm=x", "vllm"])
    assert (config.selected_upstream, config.upstreams["vllm"]) == ("vllm", (tmp_path / "x").resolve())


def test_paths_for_two_upstreams_choose_neither(tmp_path):
    config = load_config(cwd=tmp_path, upstream=["vllm=x", "aiter=y"])
    assert config.selected_upstream is None and set(config.upstreams) == {"vllm", "aiter"}
