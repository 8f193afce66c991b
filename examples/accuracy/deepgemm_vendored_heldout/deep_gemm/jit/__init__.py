"""The JIT compiler and runtime are the system's: this shim re-exports them
from the installed DeepGEMM when there is one (the vendored tuner imports
build, cpp_format, generate and Runtime from here). Without it, the hosts'
checks and helpers still load; compiling a GEMM fails."""

try:
    from deep_gemm_system.jit import Runtime, build, cpp_format, generate
except ImportError:  # no system JIT on this machine
    Runtime = build = cpp_format = generate = None
