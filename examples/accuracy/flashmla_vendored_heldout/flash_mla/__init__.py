"""The engine's package root for FlashMLA's vendored Python interface
(flash_mla_interface.py, written verbatim from upstream at the pinned
commit). The interface imports the compiled extension flash_mla_cuda, built
from the vendored csrc/ files (the host entries, the split-KV decode,
combine and schedule kernels, the parameter structs, the softmax and utility
headers, the bf16 instantiation) against a system CUTLASS, which nothing
here vendors. This root re-exports nothing, so importing the package never
needs the extension."""
