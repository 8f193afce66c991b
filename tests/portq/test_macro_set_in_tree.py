"""Whether a macro is set by the port's tree: a file that names it outside a preprocessor test sets it
(a ``#define``, a ``-DNAME`` flag); a test that only reads it, on any of its continued lines, does not."""

from portq.classifier.rules.branches import set_in_tree


def test_a_define_or_a_compiler_flag_sets_a_macro():
    assert set_in_tree({"USE_GPU_B"}, {"k.cu": b"#define USE_GPU_B 1\n"})
    assert set_in_tree({"USE_GPU_B"}, {"setup.py": b"flags = ['-DUSE_GPU_B']\n"})


def test_a_test_that_only_reads_a_macro_does_not_set_it():
    assert not set_in_tree({"USE_GPU_B"}, {"k.cu": b"#if defined(USE_GPU_B)\nint x;\n#endif\n"})


def test_a_macro_read_on_a_continued_line_of_a_test_is_not_set():
    source = b"#if defined(CUDA_VERSION) && \\\n    defined(USE_GPU_B)\nint x;\n#endif\n"
    assert not set_in_tree({"USE_GPU_B"}, {"k.cu": source})


def test_a_tree_that_cannot_be_read_may_set_anything():
    assert set_in_tree({"USE_GPU_B"}, None)
