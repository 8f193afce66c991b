"""The port already has it (docs/tricky-cases.md, "the port already has
it"): when upstream's change brings its definition to the shape the port
already had, the port is IN_SYNC and says so.

* ``port-has-flag``: a compile-time flag upstream adds (a C++ template
  parameter, a ``tl.constexpr``) that a cross-language port already takes
  as an input of its own, under the flag's name without its boolean prefix
  (``Is_causal`` → ``causal``), an input upstream's old definition did not
  have, is a parameter the port already has: IN_SYNC."""
from __future__ import annotations

from portq.classifier.verdicts import compare
from portq.language.extraction import signature_of
from portq.language.symbols import symbol_table


def _sig(source: str, path: str, name: str):
    table = symbol_table(source.encode(), path)
    definition = next(d for d in table.definitions if d.name == name)
    return signature_of(definition, table.source, path)


OLD = ("template<typename T>\nvoid run_hdim64(Params &params, cudaStream_t stream) {\n"
       "    BOOL_SWITCH(params.is_causal, Is_causal, [&] { run<T, Is_causal>(params, stream); });\n}\n")
NEW = ("template<typename T, bool Is_causal>\nvoid run_hdim64(Params &params, cudaStream_t stream) {\n"
       "    run<T, Is_causal>(params, stream);\n}\n")


def _items(port_source):
    port = _sig(port_source, "k.py", "run_hdim64")
    return compare(_sig(OLD, "a.cu", "run_hdim64"), _sig(NEW, "a.cu", "run_hdim64"), port)


def test_a_flag_the_port_already_takes_without_its_prefix_is_in_sync():
    items = _items("def run_hdim64(q, k, v, out, causal):\n    return launch(q, k, v, out, causal, 64)\n")
    flags = [i for i in items if "causal" in i.message]
    assert flags and {i.status for i in flags} == {"sync"}, [(i.status, i.message) for i in items]
    assert {i.rule for i in flags} == {"port-has-flag"}


def test_a_port_without_such_an_input_is_still_for_a_reader():
    items = _items("def run_hdim64(q, k, v, out):\n    return launch(q, k, v, out, False, 64)\n")
    flags = [i for i in items if "causal" in i.message]
    assert flags and {i.status for i in flags} == {"undecided"}, [(i.status, i.message) for i in items]


def test_an_input_upstream_already_had_is_not_taken_for_the_new_flag():
    old = OLD.replace("Params &params, cudaStream_t stream", "Params &params, bool causal, cudaStream_t stream")
    new = NEW.replace("Params &params, cudaStream_t stream", "Params &params, bool causal, cudaStream_t stream")
    port = _sig("def run_hdim64(q, k, v, out, causal):\n    return launch(q, k, v, out, causal, 64)\n", "k.py",
                "run_hdim64")
    items = compare(_sig(old, "a.cu", "run_hdim64"), _sig(new, "a.cu", "run_hdim64"), port)
    flags = [i for i in items if "is_causal" in i.message]
    assert flags and {i.status for i in flags} == {"undecided"}, [(i.status, i.message) for i in items]
