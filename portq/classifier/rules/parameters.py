"""Parameter rules: an upstream definition's interface, old against new, placed against its port (DESIGN §6).

Parameters compare by normalised name (``src_cache_ptr`` is ``src_cache``).
Each delta places the port behind (a gap, REAL_GAP or INERT by its
callers), in sync, undecided (NEEDS_REVIEW) or in a declared scope.

The code: the comparison of parameters against a port (``Delta`` items that
``portq.classifier.deltas.compare`` gathers), and the derivation of a value
upstream now passes to a kernel from what the launching function already has
(shapes, strides, constants, values the kernel already receives, and names its
module binds once to such values: ``constant-derived-parameter``). It reads the
signatures and syntax trees handed to it; it reads no git, imports no verdict
table and never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import re

from dataclasses import dataclass

from portq.classifier.delta import Delta, _ruled
from portq.classifier.rules import Rule, equivalence
from portq.classifier.rules.cosmetic import (_function_body, _function_node, _python_parameters, _target_identifiers,
                                             enclosing_function_node,
                                             cpp_parameter_declarations)
from portq.core.evidence import Evidence, Kind
from portq.language.signatures import Signature, Use, has_ancestor, node_text, nodes_of, normalise_name
from portq.language.signatures_python import PythonLocals, autograd_context, is_field_or_keyword
from portq.language.symbols import KIND_TRITON_KERNEL, function_declarator, parse

RULES = (
    Rule("parameter-change", ("REAL_GAP", "INERT", "IN_SYNC"),
         "A parameter upstream added or removed that the port still lacks or still takes leaves the port behind; "
         "a port that already matches, or returns what a new out-parameter carries, is in sync.",
         "-def k(x, n):\n+def k(x, n, stride):  (the port's k(x, n) lacks stride)",
         "classifier.rules.parameters._parameter_items"),
    Rule("heuristic-parameter", ("NEEDS_REVIEW",),
         "A constexpr a `@triton.heuristics` lambda computes from the kernel's own arguments, added or removed, "
         "is an implementation detail no caller passes: for a reader, never a gap. The table is read whether "
         "passed by position or as `values=`, and pure arithmetic of `math` (`ceil`, `floor`, `log2`, ...) "
         "computes from the arguments as `triton.cdiv` does; a lambda that calls anything else stays a gap.",
         "+@triton.heuristics({'EVEN_K': lambda a: a['K'] % a['BLOCK_K'] == 0})",
         "classifier.rules.parameters._parameter_items"),
    Rule("unread-kernel-parameter", ("NEEDS_REVIEW",),
         "A parameter upstream adds to a Triton kernel that the kernel's body never reads and no "
         "`@triton.heuristics` lambda of it reads, but that its file's tuning code names (a string literal "
         "naming it: an autotuner's key, a pruner's or hook's `nargs['NAME']`; they choose among "
         "configurations, not what the body computes) changes no value the kernel computes: a port "
         "whose kernel lacks it, or whose launch does not pass it (the kernel defined beside the launch), is "
         "for a reader (at most NEEDS_REVIEW), never REAL_GAP on that alone; so is a parameter a Python host "
         "gains whose every read hands it, whole, to such a kernel parameter at its launch. A parameter the "
         "body reads, that a heuristics lambda reads, that no tuning code names (a caller's value into a "
         "parameter nothing reads is the interface), or that the host reads otherwise too, is an input: still "
         "a gap.",
         "+@triton.autotune(configs=cfgs, key=['n', 'n_bucket'])\n-def k(x, y, n, BLOCK: tl.constexpr):\n"
         "+def k(x, y, n, n_bucket, BLOCK: tl.constexpr):   (the body never reads n_bucket)",
         "classifier.rules.parameters._parameter_items, classifier.rules.launch._bound_items, "
         "language.signatures_python._unread_kernel_params"),
    Rule("derived-parameter", ("NEEDS_REVIEW",),
         "A new parameter (or launch argument) upstream computes only from shapes, constants and values the "
         "kernel already receives is how upstream implements the kernel, not an input the port's callers must "
         "supply: for a reader (at most NEEDS_REVIEW), quoting the derivation. A helper applied to nothing but "
         "the `dtype` of one of the launcher's parameters (`util.acc_type(x.dtype)`, its callee no parameter) is "
         "chosen by the input's element type, which the kernel receives with the tensor: derived too, as is "
         "such a dtype compared with a dtype constant (`x.dtype is torch.float16`). A kernel parameter upstream "
         "leaves unused (dead) whose launch upstream fills with such a derived value is a body change of the "
         "wrapper and kernel pair, for a reader, not `dead-input`; one filled with a caller's value stays a gap. "
         "So is a keyword argument upstream's launch stops passing that its old side derived so (the port "
         "still passing it); a caller's value handed on, or an argument passed by position, stays a gap.",
         "+    padded = triton.next_power_of_2(d)\n+    k[grid](x, d, PADDED=padded)",
         "classifier.rules.parameters._parameter_items, classifier.rules.parameters._compared_with_dtype, "
         "classifier.rules.launch._derived_arguments_item, classifier.rules.launch._dropped_derived_item, "
         "classifier.verdicts.SymbolClassifier._old_launch_derivation"),
    Rule("positional-derived-argument", ("NEEDS_REVIEW",),
         "A launch argument upstream adds or drops by position, computed (on the side that passes it) only from "
         "shapes, constants and values the kernel already receives, where the port's launch binds exactly its own "
         "in-tree kernel's run-time parameters (a compile-time one its tuner or heuristics fill needs no "
         "argument), passing every one upstream dropped (a parameter upstream renamed at its position is not "
         "dropped) and none it added (its launch and its "
         "own kernel still one pair at upstream's old shape), and a dropped one is a parameter upstream renamed "
         "at its position (a parameter it adds binds there now): the pair is behind together, not an input the port's callers must supply; for "
         "a reader (at most NEEDS_REVIEW), quoting the derivation. A port's launch that binds anything else, or "
         "an argument filled from the launcher's own parameter (a caller's value), or a positional argument "
         "upstream drops outright, stays a gap.",
         "-    k[grid](a, b, rows)\n+    cols = b.shape[0]\n+    k[grid](a, b, rows, cols)  (the port's "
         "k[grid](a, b, rows) against its own k(a, b, rows))",
         "classifier.rules.launch._bound_items, classifier.verdicts.SymbolClassifier._derivation, "
         "classifier.verdicts.SymbolClassifier._old_launch_derivation"),
    Rule("constant-derived-parameter", ("NEEDS_REVIEW",),
         "A new parameter (or launch argument) the launching wrapper computes from its inputs' shapes, values the "
         "kernel already receives and module-level constants (a name bound once at module level from literals, "
         "never rebound nor declared global) is a body-level change of the wrapper and kernel pair, not an input "
         "the port's callers must supply: for a reader (at most NEEDS_REVIEW), quoting the constant. A name "
         "rebound anywhere, or read from the environment, stays a caller's input.",
         "+LIMIT = 2**31 - 4096\n...\n+    k[grid](x, n, WIDE=0 if n <= LIMIT else 1)",
         "classifier.rules.parameters.derive, classifier.rules.parameters._parameter_items, "
         "classifier.rules.launch._derived_arguments_item"),
    Rule("instance-derived-parameter", ("NEEDS_REVIEW",),
         "A parameter added to or removed from a method of a class whose every caller is another method of the "
         "same class (`self.kernel(...)`, nothing outside the class binds it), where at every call the calling "
         "method passes a local it computes itself (never one of its parameters handed on, only their attributes "
         "such as shapes and dtypes, the instance's configuration and constants) and the calling method's own "
         "parameters are unchanged, is how the class implements its launch, not an input the port's callers "
         "supply: a body-level change of the pair, for a reader (at most NEEDS_REVIEW), quoting the assignments. "
         "A value the calling method receives and hands on, or a method code outside the class calls, stays a gap.",
         "-        layout = self._layout(width)\n-        self.kernel(x, layout)\n"
         "+        copy, per_row = self._tiled(width)\n+        self.kernel(x, copy, per_row)",
         "classifier.rules.parameters.instance_computed, classifier.rules.parameters._parameter_items"),
    Rule("allocated-buffer-parameter", ("NEEDS_REVIEW",),
         "A new kernel parameter (or launch argument) to which every launch passes a buffer the launching wrapper "
         "allocates itself (`torch.empty`, `zeros`, `*_like`, ...), shaped from its inputs' shapes, devices and "
         "constant dtypes, and does not return, is scratch or statistics the wrapper keeps: a body-level change "
         "of the wrapper and kernel pair, not an input the port's callers supply nor a result they receive, so "
         "for a reader (at most NEEDS_REVIEW), quoting the allocation. A buffer a caller passes, one the wrapper "
         "returns (a new output), or one computed from anything else stays a gap.",
         "+    stats = torch.empty((t,), device=x.device, dtype=torch.float32)\n"
         "-    k[grid](x, out, n)\n+    k[grid](x, out, stats, n)",
         "classifier.rules.parameters.derive, classifier.rules.parameters._parameter_items, "
         "classifier.rules.launch._derived_arguments_item"),
    Rule("layout-derived-parameter", ("NEEDS_REVIEW",),
         "A new kernel parameter (or launch argument) upstream fills with a shape or stride of a local tensor the "
         "launching function lays out from its inputs (each assignment reaching the read an input, a view or "
         "reshape of one: `reshape`, `view`, `transpose`, `permute`, `contiguous`, ..., whose own arguments are "
         "derived, or a fresh allocation shaped from them, `torch.empty_like(x)`) is derived: that tensor's "
         "shape and strides follow from the inputs' alone, and the buffer itself is not passed, so it is neither "
         "kept nor returned. For a reader (at most NEEDS_REVIEW), quoting the layout. A view shaped by a value a "
         "caller supplies, a local some other call produces, or one updated in place stays a gap.",
         "+    flat = x.reshape(-1, x.shape[-1])\n+    out = torch.empty_like(flat)\n"
         "-    k[grid](x, out, n)\n+    k[grid](x, out, n, stride_out=out.stride(0))",
         "classifier.rules.parameters.derive, classifier.rules.launch._derived_arguments_item"),
    Rule("redesigned-port", ("NEEDS_REVIEW",),
         "A port sharing under half of upstream's parameters is a redesign: that it lacks a new upstream "
         "parameter says nothing about its shape.",
         "+def k(a, b, c, d):  (the port k(x, y, c) shares one of three)",
         "classifier.rules.parameters._parameter_items"),
    Rule("parameter-default", ("REAL_GAP", "INERT", "IN_SYNC", "NEEDS_REVIEW"),
         "A parameter that gained or lost its default upstream leaves a port that did not follow behind.",
         "-def f(x, scale):\n+def f(x, scale=None):",
         "classifier.rules.parameters._parameter_items"),
    Rule("forwarded-default", ("NEEDS_REVIEW",),
         "A default a Python parameter gains upstream on a definition whose old body this commit extracted into "
         "a helper it now calls, where every `return` of the definition returns a call of such a helper passing "
         "the parameter on unchanged (the only reads of it), nothing else can end the definition but a `raise`, "
         "and each helper still takes it with no default and reads it in no branch condition: a call that omits "
         "the argument hands the default to the old body, which has no case for it, so upstream computes "
         "nothing for such a call that the port does not compute when passed the same value. The default is "
         "no capability a caller can use, and a port without it is for a reader (at most NEEDS_REVIEW). A "
         "default the definition or the helper acts on, a path that returns something else, or a new "
         "parameter stays a gap.",
         "-def f(x, plan):\n-    return ext.f(x, plan)\n+def f_gen_a(x, plan):\n+    return ext.f(x, plan)\n"
         "+def f(x, plan=None):\n+    if gen() == 9:\n+        return f_gen_a(x, plan)\n+    raise ValueError(gen())",
         "classifier.rules.parameters.forwarded_only, classifier.rules.parameters._parameter_items, "
         "classifier.verdicts.SymbolClassifier._forwarded_default"),
    Rule("compile-time-parameter", ("IN_SYNC", "NEEDS_REVIEW"),
         "Across languages a C++ template parameter and a `tl.constexpr` need not correspond: only a match by "
         "name decides (IN_SYNC); otherwise for a reader.",
         "-template <int BLOCK>\n+template <int BLOCK, bool PAGED>",
         "classifier.rules.parameters._cross_language_constexpr_items"),
    Rule("renamed-parameter", ("IN_SYNC",),
         "A C++ parameter upstream renamed in place (same position, same kind, default kept, a respelling of one name: "
         "the same words, or one of several words changed) is the same input: "
         "C++ binds arguments by position, so every call binds the same value to it and the port's old name is "
         "no gap; what the body does with it is compared as the body.",
         "-template <bool Is_even_N> void f(T tensor, int n)\n+template <bool Is_even_MN> void f(T tensor_, int n)",
         "classifier.rules.parameters.renamed_in_place, classifier.rules.parameters._parameter_items"),
    Rule("positional-parameter-renaming", ("NEEDS_REVIEW",),
         "A Python parameter upstream renamed in place (removed and added at the same position, both compile-time "
         "or both not, the default kept or still absent, neither name one the other side still has) that no call "
         "or launch in the files the commit changes binds by keyword, before or after: every caller passes it "
         "the same value by position, so the port keeping the old name is no gap of its interface; whether the "
         "value now means something else, and what the body does with it, is for a reader (at most "
         "NEEDS_REVIEW). A rename some call binds by keyword, or a parameter inserted or moved, stays a gap.",
         "-def k(X, Y, n):\n+def k(in_ptr, out_ptr, n):  (k[grid](x, y, n) both sides)",
         "classifier.rules.parameters.renamed_positionally, classifier.rules.parameters._parameter_items"),
    Rule("unread-catch-all", ("NEEDS_REVIEW",),
         "A `**kwargs` upstream adds to a Python definition whose body never reads it binds nothing the definition "
         "uses: every call the port's signature accepts computes what it did, and the keywords it swallows select "
         "nothing, so a port without it is for a reader, never REAL_GAP on that alone. A catch-all the body reads or "
         "passes on is an input like any other.",
         "-def scaled_rows(x, scale=None):\n+def scaled_rows(x, scale=None, **kwargs):",
         "classifier.rules.parameters._parameter_items"),
    Rule("dead-input", ("REAL_GAP", "INERT", "IN_SYNC"),
         "A parameter upstream now leaves unused (dead) that the port still takes and uses leaves it behind; a "
         "port that dropped it or leaves it unused too is in sync. In C++, a name read by a function-like macro "
         "of the same file that the body invokes (`#define inst(v) if (n == v) return k<v>`, `inst(1);`) is "
         "read by the body, as the expansion does: a selector whose if-chain becomes such a macro still reads "
         "its parameter, and the change is body-level (DESIGN §5: a wider table of instantiations serves more "
         "inputs, but no caller-supplied input changes), never dead. A C++ parameter read only into the "
         "arithmetic initializer of a local nothing reads again (`int off = b * mp + head;`) feeds nothing: it "
         "is dead on both sides of a commit that drops that line.",
         "-    y = x * scale\n+    y = x  (scale still in the signature)",
         "classifier.rules.parameters._parameter_items"),
    Rule("revived-input", ("REAL_GAP", "INERT"),
         "A parameter of a ported Python host (a function callers call, not a kernel a launch fills) that "
         "upstream accepted but never read before the commit and now reads in the condition of a branch "
         "(`if` or `elif` whose block binds or returns a value, or a conditional expression) selects a path by "
         "a value its callers supply; "
         "a port that takes the parameter and still never reads it, and does not declare it not carried, "
         "gives those callers the old path whatever they pass: an interface the port lacks (REAL_GAP where "
         "non-test code reaches the port). A revived read that is no branch condition (an assert, a value "
         "passed on, a branch that only raises or logs) stays body for a reader; a port that reads the parameter "
         "stays with the other rules.",
         "-def f(x, layout=\"rows\"):\n-    return g(x)\n+def f(x, layout=\"rows\"):\n+    if layout == \"cols\":\n"
         "+        x = x.t()\n+    return g(x)   (the port takes layout and never reads it)",
         "classifier.rules.parameters._parameter_items, classifier.rules.parameters.branch_read, "
         "classifier.verdicts.SymbolClassifier._against_port"),
    Rule("hint-parameter", ("NEEDS_REVIEW",),
         "A Triton kernel that gains a parameter with a default its body reads only as the whole value of a "
         "memory hint of a load or store (`eviction_policy=`, `cache_modifier=`): whatever value it takes the "
         "kernel computes the same values, and no launch must pass it, so the port lacking it computes what "
         "upstream computes; only speed may differ, for a reader. A parameter read anywhere else (arithmetic, a "
         "branch), or one without a default, stays `parameter-change`.",
         "-def k(x, n, BLOCK: tl.constexpr):\n+def k(x, n, BLOCK: tl.constexpr, EVICT: tl.constexpr = \"\"):   "
         "(read as tl.load(p, eviction_policy=EVICT))",
         "classifier.rules.parameters._parameter_items, language.signatures_python._PythonExtractor._hint_only"),
    Rule("default-selector-parameter", ("NEEDS_REVIEW",),
         "A Triton kernel that gains a parameter with a literal default read only as the whole condition of `if` "
         "statements (no `elif`), where the branches its default selects hold only lines the old body had and the "
         "other branches none of them: at the default the kernel runs the code it ran before, and no launch must "
         "pass the parameter, so the port lacking it is behind only on an interface addition, for a reader. A "
         "default selecting new code, another branch taking an old line off the default path, a read anywhere "
         "else, a name a string literal of the file holds (a tuning config may set it), or no default stays "
         "`parameter-change`.",
         "-def k(x, BLOCK: tl.constexpr):\n+def k(x, BLOCK: tl.constexpr, WIDE: tl.constexpr = False):   "
         "(if(WIDE): <new code> else: <the old line>)",
         "classifier.rules.parameters._default_path_is_old, "
         "language.signatures_python._PythonExtractor._selector_defaults"),
    Rule("kept-default", ("NEEDS_REVIEW",),
         "A parameter that loses its default upstream (its callers must now pass it) while the port keeps a "
         "default for it: the port still accepts every call upstream accepts, so it is not behind on the "
         "interface, and what the dropped fallback computed is body for a reader (NEEDS_REVIEW, never REAL_GAP). "
         "A default gained upstream that the port lacks, or a parameter the port does not have, stays with "
         "`parameter-default`.",
         "-def dequant(q, scales, bits, maxq=None):\n+def dequant(q, scales, bits, maxq):   (the port keeps "
         "maxq=None and its fallback)",
         "classifier.rules.parameters._parameter_items"),
    Rule("cpp-parameter-renaming", ("NEEDS_REVIEW",),
         "A C++ runtime parameter upstream renamed in place under any name (removed and added at the same "
         "position, the count unchanged, the same declared type once `const` is dropped, the default kept or "
         "still absent, neither name one the other side still has): C++ binds arguments by position, so every "
         "caller passes the renamed parameter the value it passed the old one and the port keeping the old name "
         "is no gap of its interface; whether the value now means something else, and what the body does with "
         "it, is for a reader (at most NEEDS_REVIEW, like `positional-parameter-renaming` in Python). A "
         "parameter whose type changes, or one inserted or moved, stays a gap.",
         "-__global__ void k(float* input, float* output, int n)\n+__global__ void k(float* residual, const "
         "float* hidden_state, const int n)",
         "classifier.rules.parameters.renamed_by_position, classifier.rules.parameters._parameter_items"),
    Rule("internal-parameter", ("NEEDS_REVIEW",),
         "A C++ function (not a kernel launch) that gains a runtime parameter which only upstream's own callers "
         "supply, each computing it itself: every caller the function had keeps its own parameters and passes, at "
         "the new position, a local it declares in its body (never one of its parameters), and in the tree the "
         "port's function is called only from definitions that port upstream definitions. No interface the "
         "port's own code calls changes, so the parameter is how the copied code is wired inside, for a reader "
         "(at most NEEDS_REVIEW), quoting the declarations. New callers are new siblings, decided on their own. "
         "A caller handing on a parameter of its own, or tree code that is no port calling the function, keeps "
         "the gap.",
         "-void gated_act(const float* in, float* out, cudaStream_t s)\n+void gated_act(const float* in, float* "
         "out, Param& p, cudaStream_t s)   (api_swiglu: +Empty e = {}; gated_act<Empty>(in, out, e, s))",
         "classifier.rules.parameters.internal_argument, classifier.verdicts.SymbolClassifier._internal_parameter"),
    Rule("computed-internal-parameter", ("NEEDS_REVIEW",),
         "A Python function or method (no kernel) that gains a parameter which only upstream's own callers bind, "
         "each to a constant or to a name that is none of its own parameters (nor of a function around it, nor a "
         "local assigned one as it is): some call binds it; every call of it in the Python files the commit "
         "changes (which hold every call that can bind a parameter new in it) is read, and each binding one lies "
         "in a function of the row's own files or one new in the commit (a new sibling, decided on its own); and "
         "the tree calls the port's function, outside tests, only from definitions that port upstream ones (a "
         "name it is imported under counted as its own). No input of an entry point the engine calls changes: "
         "the parameter is how the copied code is wired inside, for a reader (at most NEEDS_REVIEW), quoting the "
         "bindings. A caller handing the parameter on as it is, from a parameter of its own it never rebinds, counts "
         "when that forwarder (a ported definition the commit modifies) is itself decided so for it, up to three "
         "forwarders deep: the chain ends at constants or computed values inside the row. A forwarder's parameter "
         "new in the commit can be bound only in the files the commit changes; one it already took may be bound "
         "by callers in files the commit leaves alone, so its callers are read in every Python file upstream holds "
         "at the new side (each binding one in a file the row claims). A docstring naming the function is no call. "
         "An option no call binds, a forwarded parameter some caller hands on from an input of its own that "
         "nothing binds (an entry point's input), a caller outside the row's files binding it, or tree code that "
         "is no port calling the function or a forwarder keeps the gap.",
         "-def plan(m, n, grouped=False):\n+def plan(m, n, grouped=False, masked=False):   (run_masked: "
         "plan(m, n, masked=True); the tree's plan called only from its port of run)",
         "classifier.rules.parameters.computed_bindings, "
         "classifier.verdicts.SymbolClassifier._computed_internal_parameter, ._forwarded_internal, "
         "classifier.verdicts._docstring_spans"),
    Rule("removed-internal-parameter", ("NEEDS_REVIEW",),
         "A runtime parameter upstream removes from a Python function or method (no kernel) that the port still "
         "takes, where the tree calls the port's function, outside tests, only from definitions that port "
         "upstream ones (every other mention an import, a comment or its own definition): the port's helper and "
         "its copied callers, still passing the value, are behind as a pair, how the copy is wired inside; no "
         "input of an entry point the engine calls changes (an entry point losing the parameter is decided on "
         "its own), so for a reader (at most NEEDS_REVIEW). Non-test tree code that is no port calling or naming "
         "the function keeps the gap.",
         "-def build(name, keys, template):\n+def build(name, keys):   (the tree's build called only from its "
         "port of run)",
         "classifier.rules.parameters._parameter_items, "
         "classifier.verdicts.SymbolClassifier._removed_internal_parameter"),
    Rule("autograd-context", ("NEEDS_REVIEW", "REAL_GAP", "INERT", "IN_SYNC", "NOT_APPLICABLE"),
         "The first parameter of `forward` in a class deriving from `Function` (`torch.autograd.Function`) that "
         "defines no `setup_context` is the context autograd passes: `apply(*inputs)` supplies it, so it is no "
         "parameter a caller binds and no part of the interface callers see, and the signature reads without it "
         "(a parameter added or removed is then an input). Beside a `setup_context`, or outside a `Function`, the "
         "first parameter is an input. A typed splat (`*args: Any`) is the splat `*args`.",
         "-def forward(*args, **kwargs): ...\n-def setup_context(ctx, inputs, output): ...\n"
         "+def forward(ctx, *args, **kwargs): ...   (callers call `.apply(x)` on both sides)",
         "language.signatures_python.autograd_context, ._PythonExtractor._params"),
    Rule("copied-launcher-parameter", ("NEEDS_REVIEW",),
         "A CUDA kernel that gains a runtime parameter which only upstream's own launchers pass: every function "
         "of upstream's file that launched the kernel keeps its own parameters, every launch on the new side "
         "passes the parameter (a launcher new in the commit is a new sibling, decided on its own), and in the tree the port's kernel is used only by launches inside "
         "functions of the port's own file with those names and parameters (copies of upstream's launchers, "
         "such as explicit specialisations `template <> void launch<float>(...)` that no anchor can name). The "
         "value is computed from what the launchers already receive, so no interface the engine calls changes: "
         "the kernel and its copied launchers are behind as a pair, how the copy is wired inside, for a reader "
         "(at most NEEDS_REVIEW). Engine code launching the kernel, a launcher that gains the value as a "
         "parameter of its own, a use outside a function, or a tree launcher upstream lacks keeps the gap.",
         "-__global__ void k(T *out, const T *in)\n+__global__ void k(T *out, const T *in, int width)   "
         "(template <> void launch<float>(..., int width, ...): -k<<<g, b>>>(out, in); +k<<<g, b>>>(out, in, "
         "width))",
         "classifier.rules.parameters.cpp_kernel_uses, classifier.verdicts.SymbolClassifier._copied_launcher_parameter"),
    Rule("kernel-parameter-type", ("REAL_GAP", "INERT"),
         "A CUDA kernel's by-value parameter whose type changes from one of the kernel's template type "
         "parameters to a fixed floating type (`T eps` → `float eps`), its name and every other parameter the "
         "same, while the port's parameter in that position is still typed by a template type parameter of the "
         "port: every launch of the port converts the value to the instantiated type before the kernel reads "
         "it, where upstream's kernel receives it at the fixed type. The launch still compiles (the argument "
         "converts implicitly), so no parameter is missing, but the port keeps the old interface and rounds "
         "what upstream no longer rounds: behind, REAL_GAP when non-test code launches the port, INERT when "
         "only tests do (`caller-reachability`). A port already taking the fixed type, a pointer or reference "
         "parameter, or a retyping between two fixed types is left to the other rules.",
         "-__global__ void ln_kernel(SizeT N, T eps, const T* X, T* Y)\n"
         "+__global__ void ln_kernel(SizeT N, float eps, const T* X, T* Y)   "
         "(the port: template <typename S> __global__ void rows(int n, S eps, ...), launched by the engine)",
         "classifier.rules.parameters.template_retyped_parameters, "
         "classifier.rules.definitions.DefinitionRules._from_items"),
    Rule("context-derived-parameter", ("NEEDS_REVIEW",),
         "A parameter added to or removed from a static method of an autograd `Function` (`Cls.__backward`, "
         "private or not) whose every call is `Cls.method(...)` or `self.method(...)` inside the class's own "
         "methods (no mangled `_Cls__method` elsewhere), where the calling `backward` passes `ctx.NAME` that the "
         "class's own `setup_context` or `forward` stores on the context, both keeping their parameters: the "
         "value is one `apply`'s callers already supply, kept by the class between its passes, so the change is "
         "how the class wires its backward, not an input the port's callers supply: for a reader (at most "
         "NEEDS_REVIEW), quoting the assignment. A context attribute the class never stores, a storing method "
         "whose parameters change, or a call from outside the class keeps the gap.",
         "+        ctx.dim = dim      (setup_context)\n"
         "-        return Cls.__backward(*grad_outputs, *ctx.saved_tensors)\n"
         "+        return Cls.__backward(grad_output, output, ctx.dim)",
         "classifier.rules.parameters.instance_computed, classifier.rules.parameters._context_stored"),
    Rule("removed-parameter-role", ("NEEDS_REVIEW",),
         "A parameter upstream removes is matched in the port by name. \"The port does not take it\" is sound only "
         "where the port's parameters of its kind (constexpr or runtime) are no more than upstream's new ones, "
         "less those the port declares not carried; where the port takes more (and no more than upstream's old "
         "definition did, so its list can hold the removed one; Python and Triton, where a parameter missing is "
         "gone, not a C++ parameter that lost only its name), one of its own names may still "
         "stand for the removed input: for a reader (at most NEEDS_REVIEW), never IN_SYNC by absence.",
         "-def k(x_ptr, x_stride, n):\n+def k(x_ptr, n):   (the port's k(src, src_stride, width) takes 3 against 2)",
         "classifier.rules.parameters._port_takes_more"),
    Rule("hoisted-local", ("NEEDS_REVIEW",),
         "A definition that takes, in place of some of its parameters, exactly one new parameter named as a local "
         "its old body computed from them (the local's line gone, the removed parameters read nowhere else) and "
         "whose body is otherwise unchanged line for line: it computes what it did from what it is given, the "
         "computation moved to its callers, whose change (what they now pass) is decided on them. The port still "
         "taking the old parameters is then no gap of this definition by itself: for a reader (at most "
         "NEEDS_REVIEW), never REAL_GAP. Any other change of the body, or a removed parameter read beside the "
         "local, keeps the gap.",
         "-def dot8(acc, x_base, x_row, x_col, w_ptr, n):\n-    h_ptr = x_base + x_row * n + x_col\n"
         "+def dot8(acc, h_ptr, w_ptr, n):   (the rest of the body the same)",
         "classifier.moves.hoisted_local, classifier.verdicts.SymbolClassifier"),
)


# --- derivations of launch arguments --------------------------------------------


_SHAPE_READS = frozenset({"shape", "stride", "size", "dim", "ndim", "numel", "dtype", "device",
                          "element_size", "itemsize", "is_contiguous"})


_ALLOCATORS = frozenset({"torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.empty_like",
                         "torch.zeros_like", "torch.ones_like", "torch.full_like"})
"""Calls that allocate a fresh tensor from a shape (or a tensor's shape), a device and a dtype: the wrapper's own
buffer, never a value a caller supplies."""

_DTYPES = frozenset({"float16", "bfloat16", "float32", "float64", "float", "half", "int8", "int16", "int32", "int64",
                     "uint8", "bool", "float8_e4m3fn", "float8_e5m2"})
"""``torch.X`` attributes that name a dtype: constants an allocation may read."""

_LAYOUT_METHODS = frozenset({"reshape", "view", "contiguous", "transpose", "permute", "flatten", "t", "squeeze",
                             "unsqueeze", "view_as", "reshape_as", "movedim"})
"""Tensor methods whose result's shape and strides follow from the receiver's and their own arguments alone
(``derived-parameter``: a layout of the inputs)."""

_PURE_CALLS = frozenset({"next_power_of_2", "next_pow2", "_next_pow2", "cdiv", "ceil_div", "div_ceil", "min",
                         "max", "int", "abs", "len", "round", "math.ceil", "math.floor", "math.log2",
                         "math.prod"})


Step = Use
"""One assignment a derivation goes through: its line and the quoted source line."""


@dataclass(frozen=True)
class Derivation:
    """How a launch argument is computed: the assignments followed, and the
    terminals reached (shapes of parameters, constants, arguments the kernel
    already receives). ``derived`` is False when a terminal is a value a
    caller supplies (a parameter read as itself) or a name that cannot be resolved."""

    argument: str
    derived: bool
    steps: tuple[Step, ...]
    terminals: tuple[str, ...]
    reason: str = ""
    path: str = ""  # the file of the launching function, where the steps are
    constants: tuple[str, ...] = ()  # the module-level constants the derivation reads
    allocations: tuple[str, ...] = ()  # the buffers the launching function allocates for it
    layouts: tuple[str, ...] = ()  # the shape reads of local tensors laid out from the inputs it goes through


def derivation_rule(derivations) -> str:
    """``allocated-buffer-parameter`` when any of ``derivations`` is a buffer the launching function
    allocates, else ``constant-derived-parameter`` when any reads a module-level constant, else
    ``derived-parameter``."""
    derivations = list(derivations)
    if any(d.allocations for d in derivations):
        return "allocated-buffer-parameter"
    if any(d.constants for d in derivations):
        return "constant-derived-parameter"
    return "layout-derived-parameter" if any(d.layouts for d in derivations) else "derived-parameter"


_SCOPES = ("function_definition", "class_definition", "lambda")


def _module_of(node):
    while node.parent is not None:
        node = node.parent
    return node if node.type == "module" else None


def _outside_scopes(node) -> bool:
    return not has_ancestor(node, _SCOPES)


def module_constant(node, name: str):
    """``(statement, right side)`` of the one module-level binding of ``name`` in the module holding ``node``:
    a plain assignment outside every function and class, the name bound nowhere else at module level
    (no second assignment, augmented assignment, import, loop, definition) and declared ``global`` nowhere,
    so no function can rebind it. None otherwise."""
    module = _module_of(node)
    if module is None:
        return None
    found = []
    for current in nodes_of(module, ("assignment", "augmented_assignment", "global_statement", "import_statement",
                                     "import_from_statement", "for_statement", "with_statement",
                                     "function_definition", "class_definition", "named_expression"), "python"):
        if current.type == "global_statement":
            if any(node_text(c) == name for c in current.named_children):
                return None
            continue
        if not _outside_scopes(current):
            continue
        if current.type == "assignment":
            left = current.child_by_field_name("left")
            names = [node_text(i) for i in nodes_of(left, ("identifier",), "python")] if left is not None else []
            if name in names:
                if left.type != "identifier":
                    return None
                found.append(current)
            continue
        if current.type in ("function_definition", "class_definition"):
            own = current.child_by_field_name("name")
            if own is not None and node_text(own) == name:
                return None
            continue
        if current.type in ("import_statement", "import_from_statement", "for_statement", "with_statement",
                            "augmented_assignment", "named_expression"):
            if current.type in ("for_statement", "with_statement"):
                target = current.child_by_field_name("left") or current
                if current.type == "with_statement":
                    target = next((c for c in current.named_children if c.type == "with_clause"), current)
            else:
                target = current.child_by_field_name("left") or current.child_by_field_name("name") or current
            if any(node_text(i) == name for i in nodes_of(target, ("identifier",), "python")):
                return None
    if len(found) != 1:
        return None
    statement = found[0]
    right = statement.child_by_field_name("right")
    if right is None or right.type in ("assignment",):
        return None
    return statement, right


def _launch_calls(function, kernel: str):
    """``kernel[grid](...)`` calls in a Python function."""
    for current in nodes_of(function, ("call",), "python"):
        callee = current.child_by_field_name("function")
        if callee is None or callee.type != "subscript":
            continue
        value = callee.child_by_field_name("value")
        if value is not None and node_text(value).split(".")[-1] == kernel:
            yield current


def launch_argument(function, kernel: str, slot: str, position: int | None):
    """The expression a Python launch of ``kernel`` passes for parameter
    ``slot`` (normalised keyword) or at ``position``; and the launch's other
    argument texts (what the kernel already receives)."""
    for call in _launch_calls(function, kernel):
        arguments = call.child_by_field_name("arguments")
        if arguments is None:
            continue
        positional = [a for a in arguments.named_children if a.type not in ("keyword_argument", "comment")]
        chosen, others = None, []
        for argument in arguments.named_children:
            if argument.type == "keyword_argument":
                name = argument.child_by_field_name("name")
                value = argument.child_by_field_name("value")
                if name is not None and normalise_name(node_text(name)) == slot:
                    chosen = value
                elif value is not None:
                    others.append(node_text(value))
            elif argument.type != "comment":
                others.append(node_text(argument))
        if chosen is None and position is not None and position < len(positional):
            chosen = positional[position]
            others = [t for t in others if t != node_text(chosen)]
        if chosen is not None:
            return chosen, set(others)
    return None, set()


def parameter_position(function, slot: str) -> int | None:
    """The position of the Python parameter whose normalised name is ``slot``
    in ``function``'s signature, or None (absent, or after a ``*``: keyword only)."""
    params = _function_node(function).child_by_field_name("parameters")
    children = [c for c in (params.named_children if params is not None else ()) if c.type != "comment"]
    for position, child in enumerate(children):
        if child.type in ("list_splat_pattern", "keyword_separator", "dictionary_splat_pattern"):
            return None
        name = child if child.type == "identifier" else child.child_by_field_name("name") or next(
            (c for c in child.named_children if c.type == "identifier"), None)
        if name is not None and normalise_name(node_text(name)) == slot:
            return position
    return None


def launch_argument_texts(function, kernel: str, slot: str) -> list[str]:
    """The text each Python launch of ``kernel`` in ``function`` passes by keyword for ``slot``."""
    texts = []
    for call in _launch_calls(function, kernel):
        arguments = call.child_by_field_name("arguments")
        for argument in arguments.named_children if arguments is not None else ():
            name = argument.child_by_field_name("name") if argument.type == "keyword_argument" else None
            if name is not None and normalise_name(node_text(name)) == slot:
                texts.append(node_text(argument.child_by_field_name("value")))
    return texts


def _compared_with_dtype(node, parameters) -> bool:
    """Whether ``node`` (``torch.float16``) is an operand of a comparison whose other operands are all the
    ``dtype`` of one of ``parameters`` (``x.dtype is torch.float16``): the input's element type tested
    against a constant, chosen by what the kernel receives with the tensor."""
    comparison = node.parent
    if comparison is None or comparison.type != "comparison_operator":
        return False
    others = [c for c in comparison.named_children if (c.start_byte, c.end_byte) != (node.start_byte, node.end_byte)]
    return bool(others) and all(
        c.type == "attribute" and node_text(c.child_by_field_name("attribute")) == "dtype"
        and c.child_by_field_name("object") is not None and c.child_by_field_name("object").type == "identifier"
        and node_text(c.child_by_field_name("object")) in parameters for c in others)


def derive(function, expression, received: set[str], depth: int = 12) -> Derivation:
    """Follow ``expression`` (a node inside ``function``) through local
    assignments to its terminals."""
    parameters = _python_parameters(_function_node(function))
    shaped = parameters | saved_inputs(function)  # names whose shapes are an input's
    assignments = PythonLocals(_function_node(function))
    steps: list[Step] = []
    terminals: list[str] = []
    problems: list[str] = []
    constants: list[str] = []
    allocations: list[str] = []
    layouts: list[str] = []
    allocating: list[bool] = [False]  # inside an allocation's arguments, the inputs themselves may shape it
    seen: set[str] = set()

    def visit(node, level: int, at_module: bool = False) -> None:
        if level > depth:
            problems.append(f"{node_text(node)} is derived too deeply to follow")
            return
        kind = node.type
        if kind in ("integer", "float", "true", "false", "none", "string"):
            terminals.append(node_text(node))
            return
        if kind == "attribute":
            attribute = node.child_by_field_name("attribute")
            obj = node.child_by_field_name("object")
            if not at_module and attribute is not None and node_text(attribute) in _SHAPE_READS \
                    and obj is not None and obj.type == "identifier" and node_text(obj) in shaped:
                terminals.append(node_text(node))
                return
            if not at_module and attribute is not None and node_text(attribute) in _SHAPE_READS \
                    and obj is not None and obj.type == "identifier" and node_text(obj) not in parameters:
                laid_out(node, obj, level)
                return
            if attribute is not None and node_text(attribute) in _DTYPES and obj is not None \
                    and node_text(obj) == "torch" and _compared_with_dtype(node, parameters):
                terminals.append(node_text(node))  # a dtype constant an input's dtype is compared with
                return
            problems.append(f"{node_text(node)} is read from outside the function")
            return
        if kind == "call":
            callee = node.child_by_field_name("function")
            name = node_text(callee) if callee is not None else ""
            if callee is not None and callee.type == "attribute":
                attribute = node_text(callee.child_by_field_name("attribute"))
                obj = callee.child_by_field_name("object")
                if not at_module and attribute in _SHAPE_READS and obj is not None \
                        and obj.type == "identifier" and node_text(obj) in shaped:
                    terminals.append(node_text(node))
                    return
                if not at_module and attribute in _SHAPE_READS and obj is not None \
                        and obj.type == "identifier" and node_text(obj) not in parameters:
                    laid_out(node, obj, level)
                    return
                name = f"{node_text(obj)}.{attribute}" if obj is not None else attribute
            if name in _ALLOCATORS and not at_module:
                # A fresh buffer: its shape, device and dtype are followed; a
                # keyword is followed through its value.
                allocations.append(node_text(node))
                arguments = node.child_by_field_name("arguments")
                was, allocating[0] = allocating[0], True
                for argument in arguments.named_children if arguments is not None else ():
                    value = argument.child_by_field_name("value") if argument.type == "keyword_argument" else argument
                    if value is not None and value.type == "attribute" and node_text(value).split(".")[0] == "torch" \
                            and node_text(value).split(".")[-1] in _DTYPES:
                        terminals.append(node_text(value))
                    elif value is not None:
                        visit(value, 1)  # a shape is followed afresh: the allocation is the derivation's end
                allocating[0] = was
                return
            if not at_module and _dtype_keyed(node, parameters):
                terminals.append(f"{node_text(node)} (a value chosen by an input's dtype alone)")
                return
            if name.split(".")[-1] not in _PURE_CALLS and name not in _PURE_CALLS:
                problems.append(f"{name}(...) is not a known pure helper")
                return
            arguments = node.child_by_field_name("arguments")
            for argument in arguments.named_children if arguments is not None else ():
                visit(argument, level + 1, at_module)
            return
        if kind == "subscript":
            value = node.child_by_field_name("value")
            if value is not None:
                visit(value, level + 1, at_module)
            for index in node.children_by_field_name("subscript"):
                visit(index, level + 1, at_module)
            return
        if kind == "identifier" and at_module:
            constant(node_text(node), level)
            return
        if kind == "identifier":
            name = node_text(node)
            if name in received and level > 0:
                terminals.append(f"{name} (already passed to the kernel)")
                return
            reaching, _ = assignments.reaching(name, node)
            if reaching:
                if name in seen:
                    return
                seen.add(name)
                for statement, right in reaching:  # every assignment that can reach this read
                    steps.append(Step(statement.start_point[0] + 1, node_text(statement).strip()))
                    if right is None:
                        problems.append(f"{name} is updated in place ({node_text(statement).strip()})")
                    else:
                        visit(right, level + 1)
                return
            if name in parameters and allocating[0]:
                terminals.append(f"{name} (an input shaping the buffer)")
                return
            if name in parameters:
                problems.append(f"{name} is a parameter a caller supplies")
                return
            constant(name, level)
            return
        named = [c for c in node.named_children if c.type != "comment"]
        if not named:
            problems.append(f"{node_text(node)} cannot be followed")
            return
        for child in named:
            visit(child, level + 1, at_module)

    def laid_out(read, obj, level: int) -> None:
        """A shape or stride read of a local tensor (``derived-parameter``, a layout of the inputs): the local is
        followed through every assignment that reaches the read to an input (or a saved input), a view or
        reshape of one (``_LAYOUT_METHODS``, whose arguments are followed like any derivation), or a fresh
        allocation shaped from them; its shape and strides then follow from the inputs' alone. The buffer
        itself is not passed, so it is neither an allocation kept nor an output returned."""
        layout_seen: set[str] = set()
        layouts.append(node_text(read))

        def tensor(node, depth: int) -> bool:
            if depth > 12:
                problems.append(f"{node_text(node)} is laid out too deeply to follow")
                return False
            if node.type == "parenthesized_expression" and len(node.named_children) == 1:
                return tensor(node.named_children[0], depth + 1)
            if node.type == "identifier":
                name = node_text(node)
                if name in shaped:
                    terminals.append(f"{node_text(read)} (laid out from {name})")
                    return True
                if name in parameters:
                    problems.append(f"{name} is a parameter a caller supplies")
                    return False
                reaching, _ = assignments.reaching(name, node)
                if not reaching:
                    problems.append(f"{name} cannot be resolved in the launching function")
                    return False
                if name in layout_seen:
                    return True
                layout_seen.add(name)
                for statement, right in reaching:
                    steps.append(Step(statement.start_point[0] + 1, node_text(statement).strip()))
                    if right is None:
                        problems.append(f"{name} is updated in place ({node_text(statement).strip()})")
                        return False
                    if not tensor(right, depth + 1):
                        return False
                return True
            if node.type == "call":
                callee = node.child_by_field_name("function")
                arguments = node.child_by_field_name("arguments")
                listed = [a for a in (arguments.named_children if arguments is not None else ())
                          if a.type != "comment"]
                if callee is not None and callee.type == "attribute" and node_text(callee) not in _ALLOCATORS:
                    method = node_text(callee.child_by_field_name("attribute"))
                    if method not in _LAYOUT_METHODS:
                        problems.append(f"{node_text(callee)}(...) is not a known layout of a tensor")
                        return False
                    before = len(problems)
                    if not tensor(callee.child_by_field_name("object"), depth + 1):
                        return False
                    for argument in listed:
                        visit(argument.child_by_field_name("value") if argument.type == "keyword_argument"
                              else argument, level + 1)
                    return len(problems) == before
                if callee is not None and node_text(callee) in _ALLOCATORS:
                    before = len(problems)
                    was, allocating[0] = allocating[0], True
                    for position, argument in enumerate(listed):
                        value = argument.child_by_field_name("value") if argument.type == "keyword_argument" \
                            else argument
                        if position == 0 and argument.type != "keyword_argument" \
                                and node_text(callee).endswith("_like"):
                            tensor(value, depth + 1)  # laid out like another tensor: that tensor's layout
                        elif value is not None and value.type == "attribute" \
                                and node_text(value).split(".")[0] == "torch" \
                                and node_text(value).split(".")[-1] in _DTYPES:
                            terminals.append(node_text(value))
                        elif value is not None:
                            visit(value, 1)
                    allocating[0] = was
                    return len(problems) == before
            problems.append(f"{node_text(node)} is not a layout of the inputs the derivation can follow")
            return False

        tensor(obj, level + 1)
        if read.type == "call":  # ``local.stride(0)``: the index is followed too
            arguments = read.child_by_field_name("arguments")
            for argument in arguments.named_children if arguments is not None else ():
                visit(argument, level + 1)

    def constant(name: str, level: int) -> None:
        """A module-level name: a constant bound once (followed through its right side), else unresolved."""
        bound = module_constant(function, name)
        if bound is None:
            problems.append(f"{name} cannot be resolved in the launching function")
            return
        if name in seen:
            return
        seen.add(name)
        statement, right = bound
        constants.append(name)
        steps.append(Step(statement.start_point[0] + 1, node_text(statement).strip()))
        visit(right, level + 1, True)

    visit(expression, 0)
    if allocations:
        # A buffer the function returns is a new result its callers receive, not its own scratch.
        returned = {node_text(n) for r in nodes_of(_function_node(function), ("return_statement", "yield"), "python")
                    for n in nodes_of(r, ("identifier",), "python")}
        escaped = sorted(({node_text(expression)} | seen) & returned)
        if escaped:
            problems.append(f"{escaped[0]} is returned to the callers (a new output)")
    steps.sort(key=lambda s: s.line)
    return Derivation(node_text(expression), not problems, tuple(steps), tuple(dict.fromkeys(terminals)),
                      "; ".join(problems[:2]), constants=tuple(dict.fromkeys(constants)),
                      allocations=tuple(dict.fromkeys(allocations)), layouts=tuple(dict.fromkeys(layouts)))


_BINDERS = ("assignment", "augmented_assignment", "for_statement", "for_in_clause", "named_expression",
            "as_pattern", "delete_statement", "global_statement", "nonlocal_statement")


def _bound_anywhere(function) -> list[str]:
    """Every name a Python function binds anywhere in it (assignment, loop, ``:=``, ``as``, ``del``,
    ``global``), nested scopes included, once per binding: a strict reading of "rebound"."""
    names: list[str] = []
    for node in nodes_of(function, _BINDERS, "python"):
        if node.type in ("delete_statement", "global_statement", "nonlocal_statement"):
            names.extend(node_text(n) for n in node.named_children if n.type == "identifier")
            continue
        target = node.child_by_field_name("left") or node.child_by_field_name("name") \
            or node.child_by_field_name("alias")
        if target is not None:
            names.extend(node_text(n) for n in _target_identifiers(target))
    return names


def _unpacked_saved(function, ctx: str) -> list[str] | None:
    """The names of the one ``a, b, ... = ctx.saved_tensors`` of ``function`` in order, or None (none, two, a
    starred or nested target)."""
    found = []
    for node in nodes_of(function, ("assignment",), "python"):
        right, left = node.child_by_field_name("right"), node.child_by_field_name("left")
        if right is None or left is None or node_text(right).replace(" ", "") != f"{ctx}.saved_tensors":
            continue
        if left.type not in ("pattern_list", "tuple_pattern") \
                or any(c.type != "identifier" for c in left.named_children):
            return None
        found.append([node_text(c) for c in left.named_children])
    return found[0] if len(found) == 1 else None


def saved_inputs(function) -> set[str]:
    """Rule ``derived-parameter`` (a saved input): the names an autograd ``backward(ctx, ...)`` unpacks once
    from ``ctx.saved_tensors`` and never rebinds, at a position where its class's ``forward(ctx, ...)`` (the one
    call ``ctx.save_for_backward(...)`` there, every argument a plain name) saved one of its own parameters,
    never rebound in ``forward``: that tensor is the input the callers of ``apply`` passed, kept between the
    passes, so its shape is derived like an input's. Empty for anything else (a ``setup_context`` form, a saved
    tensor ``forward`` computes, a splat)."""
    function = _function_node(function)
    name = function.child_by_field_name("name")
    if name is None or node_text(name) != "backward":
        return set()
    klass = _enclosing_class(function)
    methods = _methods(klass.child_by_field_name("body")) if klass is not None else {}
    forward = methods.get("forward")
    if forward is None or "setup_context" in methods:
        return set()
    own, theirs = _parameter_list(function), _parameter_list(forward)
    if not own or not theirs:
        return set()
    unpacked = _unpacked_saved(function, own[0])
    saves = [c for c in nodes_of(forward, ("call",), "python")
             if node_text(c.child_by_field_name("function")).replace(" ", "") == f"{theirs[0]}.save_for_backward"]
    if unpacked is None or len(saves) != 1:
        return set()
    arguments = saves[0].child_by_field_name("arguments")
    saved = [c for c in arguments.named_children if c.type != "comment"] if arguments is not None else []
    if len(saved) != len(unpacked) or any(c.type != "identifier" for c in saved):
        return set()
    rebound_there, rebound_here = _bound_anywhere(forward), _bound_anywhere(function)
    inputs = set(theirs[1:])
    return {mine for mine, kept in zip(unpacked, saved)
            if node_text(kept) in inputs and node_text(kept) not in rebound_there
            and rebound_here.count(mine) == 1}


def _derivation_words(derived: Derivation) -> str:
    """``(ARG) via `step`; `step` (from terminals)``: the derivation quoted."""
    return ("a buffer the launching function allocates and keeps " if derived.allocations else "") + (f"({derived.argument})"
            + (f" via {'; '.join(f'`{s.quote}`' for s in derived.steps[:3])}" if derived.steps else "")
            + f" (from {', '.join(derived.terminals[:3])})")


def _derivation_evidence(derived: Derivation, name: str, what: str, path: str | None, symbol: str | None,
                         line: int | None = None) -> Evidence:
    """The record of a derived argument: the assignments it goes through on upstream's new side
    (``path``/``line`` where the derivation has no file or steps of its own)."""
    return Evidence(kind=Kind.DERIVATION, message=f"{what} computes {derived.argument} from "
                    + ", ".join(derived.terminals[:4]), side="upstream-new", path=derived.path or path,
                    line=derived.steps[0].line if derived.steps else line,
                    end_line=derived.steps[-1].line if derived.steps else None,
                    quote="; ".join(s.quote for s in derived.steps[:4]) or derived.argument,
                    symbol=symbol, subject=name, derived_from=derived.terminals)


# --- C++ launches: a value the launching function fixes -----------------------------


_CPP_LITERAL = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fFuUlL]*|true|false|nullptr")
_CPP_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _top_level_split(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    parts, depth, current = [], 0, []
    for char in text:
        if char in "([{<" and char != "<":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    parts.append("".join(current).strip())
    return parts


def _balanced(text: str, start: int) -> str | None:
    """The text inside the parentheses that open at ``text[start]``."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return None


def cpp_launch_constant(text: str, kernel: str, index: int, params: set[str]):
    """What the C++ function ``text`` passes kernel ``kernel`` at runtime argument ``index``, when that is
    a value it fixes: ``(argument, declaration, literal)`` for a literal, or a local bound once from a literal
    (``float bias = 0.f;``) and never assigned again nor handed out by address except to the launch's
    argument array; False when it launches ``kernel`` with anything else (a parameter of its own, a local it
    assigns again, a launch it cannot read); None when it does not launch ``kernel``. Launches are
    ``kernel<<<...>>>(args)`` and a ``void* args[] = {&a, ...}`` array in a function that names ``kernel``."""
    text = _CPP_COMMENT.sub("", text)
    name = re.escape(kernel)
    chevrons = list(re.finditer(rf"\b{name}\b\s*(?:<[^;{{}}()]*>)?\s*<<<.*?>>>\s*\(", text, re.S))
    arrays = list(re.finditer(r"\bvoid\s*\*\s*(\w+)\s*\[\s*\]\s*=\s*\{([^{}]*)\}", text))
    if not chevrons and not (arrays and re.search(rf"\b{name}\b", text)):
        return None
    values = []
    for launch in chevrons:
        inside = _balanced(text, launch.end() - 1)
        arguments = _top_level_split(inside) if inside is not None else []
        values.append((arguments[index] if index < len(arguments) else None, False))
    if arrays and not chevrons:
        if len(arrays) != 1:
            return False
        entries = _top_level_split(arrays[0].group(2))
        value = entries[index] if index < len(entries) else None
        values.append((value[1:].strip() if value and value.startswith("&") else None, True))
    found = None
    for value, by_address in values:
        if not value:
            return False
        if _CPP_LITERAL.fullmatch(value):
            found = found or (value, value, value)
            continue
        if not re.fullmatch(r"[A-Za-z_]\w*", value) or value in params:
            return False
        local = re.escape(value)
        declared = list(re.finditer(rf"(?:^|[;{{}}\n])\s*((?:const\s+|constexpr\s+)*[\w:]+\s+{local}\s*=\s*"
                                    rf"({_CPP_LITERAL.pattern})\s*;)", text))
        assigned = re.findall(rf"(?<![\w.>])(?:\+\+|--){local}\b|\b{local}\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)|"
                              rf"\b{local}\s*(?:\+\+|--)", text)
        addressed = len(re.findall(rf"&\s*{local}\b", text))
        if len(declared) != 1 or len(assigned) != 1 or addressed != (1 if by_address else 0):
            return False
        found = found or (value, declared[0].group(1).strip(), declared[0].group(2))
    return found


def cpp_function_named(node) -> tuple[str, str] | None:
    """``(name, parameter list)`` of a C++ ``function_definition`` node: the bare name of a plain, qualified
    or explicitly specialised (``launch<float>``) declarator, and its parameters with whitespace collapsed."""
    declarator = function_declarator(node.child_by_field_name("declarator"))
    if declarator is None:
        return None
    inner, parameters = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("parameters")
    if inner is not None and inner.type == "template_function":
        inner = inner.child_by_field_name("name")
    if inner is None or parameters is None:
        return None
    return node_text(inner).split("::")[-1].strip(), " ".join(node_text(parameters).split())


_CPP_NOT_CODE = frozenset({"comment", "string_literal", "raw_string_literal", "char_literal", "string_content"})


def cpp_kernel_uses(source: bytes, kernel: str, tree=None) -> list[tuple[str, str, int | None]] | None:
    """Rule ``copied-launcher-parameter``: every use of CUDA kernel ``kernel`` by name in C++ ``source``,
    outside comments, literals and the kernel's own definitions, as ``(enclosing function, its parameter
    list, arguments passed)``; the count is None for a use that is no ``kernel<<<...>>>(...)`` launch (a
    call, an address taken). None when a use lies outside any function definition (a declaration at file
    scope, an explicit instantiation) or the source cannot be parsed: such a use is not a launcher's.
    ``tree``: the source's parse, when the caller holds one."""
    if tree is None:
        if kernel.encode() not in source:
            return []
        tree = parse(source, "cpp")
    if tree is None:
        return None
    text = source.decode("latin-1")  # one character a byte: offsets agree with the tree's
    launch = re.compile(rf"{re.escape(kernel)}\s*(?:<[^;{{}}()]*>)?\s*<<<.*?>>>\s*\(", re.S)
    uses = []
    for found in re.finditer(rf"(?<![\w.>:]){re.escape(kernel)}\b", text):
        node = tree.root_node.descendant_for_byte_range(found.start(), found.end())
        function = None
        while node is not None:
            if node.type in _CPP_NOT_CODE:
                break
            if node.type == "function_definition" and function is None:
                function = node
            node = node.parent
        if node is not None:
            continue  # inside a comment or a literal
        named = cpp_function_named(function) if function is not None else None
        if named is None:
            return None
        if named[0] == kernel:
            continue  # the kernel's own definition (a specialisation, a recursion)
        call = launch.match(text, found.start())
        inside = _balanced(text, call.end() - 1) if call is not None else None
        count = None if inside is None else (0 if not inside.strip() else len(_top_level_split(inside)))
        uses.append((named[0], named[1], count))
    return uses


# --- parameters against a port ---------------------------------------------------


def _returned_instead(new: Signature, port: Signature, name: str) -> tuple[str, ...] | None:
    """The fields upstream writes through out-parameter ``name`` when a
    Python port returns every one of them (``return found, req_id, ...``):
    Triton has no out-pointers to structs, so returning them is the port's
    form of the same parameter, not a missing one."""
    fields = new.out_params.get(name)
    if fields and port.language == "python" and set(fields) <= set(port.returned):
        return fields
    return None


def _out_param_evidence(new: Signature, port: Signature, name: str) -> Evidence:
    return _upstream_param_evidence(
        new, name, "upstream-new", Kind.OUT_PARAM,
        f"upstream writes {', '.join(new.out_params[name])} through out-parameter {name}; "
        f"the port {port.name} returns {', '.join(port.returned)}")


def _upstream_param_evidence(signature: Signature, name: str, side: str, kind: str, message: str) -> Evidence:
    param = signature.param(name)
    return Evidence(kind=kind, message=message, side=side, path=signature.path,
                    line=param.line if param else signature.start_line, quote=param.quote if param else None,
                    symbol=signature.name, subject=param.name if param else name)


def _tree_param_evidence(port: Signature, name: str, message: str) -> list[Evidence]:
    param = port.param(name)
    found = [Evidence(kind=Kind.TREE_PARAM, message=message, side="tree", path=port.path,
                      line=param.line if param else port.start_line, quote=param.quote if param else None,
                      symbol=port.name, subject=param.name if param else name)]
    use = port.first_use.get(name)
    if use is not None:
        found.append(Evidence(kind=Kind.TREE_USE, message=f"the port still reads {name}", side="tree",
                              path=port.path, line=use.line, quote=use.quote, symbol=port.name,
                              subject=param.name if param else name))
    return found


def _words(name: str) -> list[str]:
    return [w for w in name.lower().split("_") if w]


def _one_name(before: str, after: str) -> bool:
    """Two spellings of one parameter: the same words (``row_offset_`` is
    ``row_offset``), or several words of which exactly one changed
    (``is_even_n`` → ``is_even_mn``); ``scale`` → ``softcap`` is not."""
    a, b = _words(before), _words(after)
    if a == b:
        return True
    return len(a) == len(b) >= 2 and sum(x != y for x, y in zip(a, b)) == 1


def _removed_and_added_by_position(old: Signature, new: Signature, old_names, new_names) -> tuple[dict, dict]:
    """``(removed, added)``: the parameters only the old side has and those only the new side has, each by its
    position; the candidates both in-place rename rules pair up."""
    removed = {old.param(n).position: old.param(n) for n in old_names if n not in new_names and old.param(n)}
    added = {new.param(n).position: new.param(n) for n in new_names if n not in old_names and new.param(n)}
    return removed, added


def renamed_in_place(old: Signature, new: Signature, old_names, new_names) -> dict[str, str]:
    """Old -> new normalised names of the C++ parameters upstream renamed in
    place: one removed and one added at the same position, both compile-time
    or both not, the default kept or still absent, the two names spellings of
    one (``_one_name``) and neither a spelling of a parameter the other side
    still has. C++ has no keyword arguments, so a call binds such a parameter
    by its position alone; Python (keyword binding) is never paired here."""
    if not (old.language == new.language == "cpp"):
        return {}
    kept = {"_".join(_words(n)) for n in old_names if n in new_names}
    removed, added = _removed_and_added_by_position(old, new, old_names, new_names)
    pairs = {}
    for position, before in removed.items():
        after = added.get(position)
        if (after is None or before.constexpr != after.constexpr or before.has_default != after.has_default
                or not _one_name(before.normalised, after.normalised)
                or {"_".join(_words(before.normalised)), "_".join(_words(after.normalised))} & kept):
            continue
        pairs[before.normalised] = after.normalised
    return pairs


def renamed_positionally(old: Signature, new: Signature, old_names, new_names, keyword_free) -> dict[str, str]:
    """Old -> new normalised names of the Python parameters upstream renamed in
    place (one removed and one added at the same position, both compile-time or
    both not, the default kept or still absent, neither name one the other side
    still has) that ``keyword_free(names)`` says no call binds by keyword."""
    if keyword_free is None or not (old.language == new.language == "python"):
        return {}
    removed, added = _removed_and_added_by_position(old, new, old_names, new_names)
    pairs = {}
    for position, before in removed.items():
        after = added.get(position)
        if (after is None or before.constexpr != after.constexpr or before.has_default != after.has_default
                or before.name.startswith("*") or after.name.startswith("*")
                or before.normalised in new_names or after.normalised in old_names):
            continue
        pairs[before.normalised] = after
    if not pairs or not keyword_free({old.param(n).name for n in pairs} | {a.name for a in pairs.values()}):
        return {}
    return {b: a.normalised for b, a in pairs.items()}


def _declared_type(param) -> str | None:
    """A C++ parameter's declared type as written on its line (``quote``), without its name, ``const``
    qualifiers or spacing; None when the line does not show it as one declaration."""
    text = param.quote or ""
    found = next((m for m in re.finditer(r"(?<![\w])" + re.escape(param.name) + r"(?![\w])", text)
                  if re.match(r"\s*(?:[,)=\[]|$)", text[m.end():])), None)
    if found is None:
        return None
    start = max(text.rfind("(", 0, found.start()), text.rfind(",", 0, found.start())) + 1
    words = re.findall(r"[A-Za-z_]\w*|\S", text[start:found.start()])
    if words.count("<") != words.count(">"):
        return None  # a template argument list split at its comma: not read from one line
    return "".join(w for w in words if w != "const") or None


def renamed_by_position(old: Signature, new: Signature, old_names, new_names) -> dict[str, str]:
    """Rule ``cpp-parameter-renaming``: old -> new normalised names of the C++ runtime parameters upstream
    renamed in place (one removed and one added at the same position, the parameter count unchanged, the
    same declared type once ``const`` is dropped, the default kept or still absent, neither name a spelling
    of one the other side still has). C++ has no keyword arguments, so every call binds the new name to the value it
    bound the old one."""
    if not (old.language == new.language == "cpp") or len(old.params) != len(new.params):
        return {}
    removed, added = _removed_and_added_by_position(old, new, old_names, new_names)
    spelled = {side: {"_".join(_words(n)) for n in names} for side, names in (("old", old_names), ("new", new_names))}
    pairs = {}
    for position, before in removed.items():
        after = added.get(position)
        if (after is None or before.constexpr or after.constexpr or before.has_default != after.has_default
                or "_".join(_words(before.normalised)) in spelled["new"]
                or "_".join(_words(after.normalised)) in spelled["old"]
                or _declared_type(before) is None or _declared_type(before) != _declared_type(after)):
            continue
        pairs[before.normalised] = after.normalised
    return pairs


def cpp_call(function: str) -> re.Pattern:
    """A call of the C++ function ``function`` by its own name (``f(``, ``f<T>(``), not of a member or of a
    name qualified by another scope."""
    return re.compile(rf"(?<![\w.>:]){re.escape(function)}\s*(?:<[^;{{}}()]*>)?\s*\(")


def _cpp_call_arguments(text: str, function: str, index: int) -> tuple[str, list]:
    """``text`` without comments, and each plain call of ``function`` in it with the runtime argument at
    ``index`` (stripped; "" when the call has fewer; None when its parentheses cannot be read)."""
    text = _CPP_COMMENT.sub("", text)
    calls = []
    for call in cpp_call(function).finditer(text):
        inside = _balanced(text, call.end() - 1)
        arguments = _top_level_split(inside) if inside is not None else []
        value = arguments[index].strip() if index < len(arguments) else ""
        calls.append((call, value if inside is not None else None))
    return text, calls


def internal_argument(text: str, function: str, index: int, params: set[str]):
    """Rule ``internal-parameter``: what the C++ definition ``text`` passes ``function`` (a plain call,
    ``function<...>(...)``, not a kernel launch) at runtime argument ``index``, when every such call passes
    a local the definition declares itself (``Empty e = {};``, never one of ``params``): the declarations,
    quoted; False when a call passes anything else or cannot be read; None when it does not call it."""
    text, calls = _cpp_call_arguments(text, function, index)
    if not calls:
        return None
    quotes = []
    for call, value in calls:
        if value is None or not re.fullmatch(r"[A-Za-z_]\w*", value) or value in params:
            return False
        declared = re.search(rf"(?:^|[;{{}}\n])\s*((?:const\s+)?[\w:<>, ]+?[\s&*]+{re.escape(value)}\s*(?:=[^;]*|\{{[^;]*\}})?;)",
                             text[:call.start()])
        if declared is None:
            return False
        quotes.append(declared.group(1).strip())
    return tuple(dict.fromkeys(quotes))


def _instance_item(name: str, kind: str, what: str, quotes: tuple[str, ...], upstream: Evidence,
                   port: Signature) -> Delta:
    """``instance-derived-parameter``: ``name`` is computed by the class's own calling method
    (``context-derived-parameter``: or stored on the autograd context by the class's own ``setup_context``)."""
    how = "each computing it itself" if not stored_on_context(quotes) else \
        "its backward reading it from the autograd context the class's own methods fill"
    return Delta("undecided", "signature",
                 f"upstream {what} {kind} {name}, which only the class's own methods pass, {how} "
                 f"(`{'`; `'.join(quotes[:2])}`) from what its callers already supply; how the class "
                 "implements its launch, not an input the port's callers supply, so for a reader (at most "
                 "NEEDS_REVIEW)", [upstream, Evidence(
                     kind=Kind.DERIVATION, message=f"the class's own calling methods compute {name} themselves: "
                     + "; ".join(quotes[:3]), side="upstream-old" if what == "removed" else "upstream-new",
                     path=upstream.path, line=upstream.line, quote="; ".join(quotes[:4]), symbol=upstream.symbol,
                     subject=name)],
                 rule="context-derived-parameter" if stored_on_context(quotes) else "instance-derived-parameter")


def _in_place_renamings(old, new, renamed: dict[str, str], status: str, rule: str, why: str) -> list[Delta]:
    """One delta per parameter ``renamed`` in place (old name -> new), saying ``why`` its name is no gap."""
    deltas = []
    for before, after in renamed.items():
        kind = _param_kind(old.param(before))
        deltas.append(Delta(status, "signature", f"upstream renamed {kind} {before} to {after} in place{why}",
                            [_upstream_param_evidence(new, after, "upstream-new", Kind.COSMETIC,
                                                      f"{kind} {before} renamed {after} at the same position")],
                            rule=rule))
    return deltas


def _port_takes_more(old: Signature, new: Signature, port: Signature, name: str, scope: set[str],
                     same_language: bool) -> tuple[int, int, str] | None:
    """``removed-parameter-role``: whether a port that lacks removed parameter ``name`` by name may
    still take it under a name of its own. A removed parameter is matched by name only, so "the port
    does not take it" is sound only where no parameter of the port can stand in its place: where the
    port's parameters of its kind (``tl.constexpr`` or runtime; runtime only across languages) are no
    more than upstream's new ones, less those the port declares not carried. Where the port takes
    more (and no more than upstream's old definition took, so that its list can hold the removed
    one: a port wider than upstream ever was here has additions of its own, or is the wider
    definition a helper was extracted from, and a count tells nothing), one of them may be the
    removed input under the port's own name::

        -def norm_kernel(x_ptr, x_stride, y_ptr, n_cols):     port: double_rows(src, src_stride, dst, width)
        +def norm_kernel(x_ptr, y_ptr, n_cols):               (4 runtime parameters against 3)

    Python and Triton definitions only: there a parameter missing from the new list is gone, where a
    C++ parameter may lose only its name and still take its argument by position.

    Returns (the port's count, upstream's new count, the kind's word) in that case, else None."""
    if not old.language == new.language == port.language == "python":
        return None
    constexpr = bool(same_language and old.param(name).constexpr)

    def count(signature: Signature, names, skip: set[str]) -> int:
        return sum(1 for n in names if n not in skip and bool(signature.param(n).constexpr) == constexpr)

    port_names = port.param_names if same_language else port.runtime_param_names
    new_names = new.param_names if same_language else new.runtime_param_names
    old_names = old.param_names if same_language else old.runtime_param_names
    mine, theirs, before = count(port, port_names, set()), count(new, new_names, scope), count(old, old_names, scope)
    return (mine, theirs, "constexpr" if constexpr else "runtime") if theirs < mine <= before else None


def _default_path_is_old(name: str, old: Signature, new: Signature) -> bool:
    """Rule ``default-selector-parameter``: whether the added parameter ``name`` of the Triton kernel ``new``
    is read only as the condition of ``if`` statements (``Signature.selector_defaults``) whose branches its
    default selects hold only lines ``old``'s body had, and whose other branches hold none of them (no old line
    moves off the default path)."""
    selector = next((s for s in new.selector_defaults if s[0] == name), None)
    if selector is None:
        return False
    _, kept, dropped = selector
    had = set(old.body_lines)
    return all(line in had for line in kept) and not any(line in had for line in dropped)


def _parameter_items(old: Signature, new: Signature, port: Signature, scope: set[str],
                     derivation=None, keyword_free=None, instance=None, internal=None,
                     selects=None, forwarded=None, removed=None, computed=None) -> list[Delta]:
    items: list[Delta] = []
    derived_params: list = []  # (label, derivation, evidence) of added parameters upstream computes itself
    # Triton to Triton, constexpr parameters compare too; across languages a
    # C++ template parameter and a tl.constexpr need not correspond.
    same_language = old.language == new.language == port.language
    old_names = old.param_names if same_language else old.runtime_param_names
    new_names = new.param_names if same_language else new.runtime_param_names
    renamed = {b: a for b, a in renamed_in_place(old, new, old_names, new_names).items()
               if b not in scope and a not in scope}
    items += _in_place_renamings(old, new, renamed, "sync", "renamed-parameter",
                                 "; C++ binds it by position, so every call binds the same value and the port's "
                                 "name is no gap")
    positional = {b: a for b, a in renamed_positionally(old, new, old_names, new_names, keyword_free).items()
                  if b not in scope and a not in scope and b not in renamed}
    items += _in_place_renamings(old, new, positional, "undecided", "positional-parameter-renaming",
                                 " and no call in the files it changed binds it by keyword, so every caller passes "
                                 "the same value by position and the port's name is no gap of its interface; "
                                 "whether the value now means something else is for a reader")
    by_position = {b: a for b, a in renamed_by_position(old, new, old_names, new_names).items()
                   if b not in scope and a not in scope and b not in renamed}
    items += _in_place_renamings(old, new, by_position, "undecided", "cpp-parameter-renaming",
                                 ", of the same type (const aside); C++ binds arguments by position, so every caller "
                                 "passes it the same value and the port's name is no gap of its interface; whether "
                                 "the value now means something else is for a reader")
    renamed = {**renamed, **positional, **by_position}
    for name in old_names:
        if name in new_names or name in renamed:
            continue
        kind = _param_kind(old.param(name))
        upstream = _upstream_param_evidence(old, name, "upstream-old", Kind.PARAM_REMOVED, f"upstream removed {kind} {name}")
        if name in scope:
            items.append(Delta("not-carried", "signature", name, [upstream]))
        elif port.param(name) is not None and old.param(name).heuristic:
            items.append(Delta("undecided", "signature", f"upstream removed {kind} {name}, which its @triton.heuristics "
                               "decorator computed from the kernel's own arguments; no caller passed it, so the "
                               "port still taking it is an implementation detail for a reader",
                               [upstream] + _tree_param_evidence(port, name, f"the port still takes {name}"),
                               rule="heuristic-parameter"))
        elif port.param(name) is not None and instance is not None and instance(name, "old"):
            items.append(_instance_item(name, kind, "removed", instance(name, "old"), upstream, port))
        elif port.param(name) is not None and not old.param(name).constexpr and removed is not None \
                and removed(name):
            items.append(Delta("undecided", "signature",
                               f"upstream removed {kind} {name} from a helper the tree calls, outside tests, only "
                               "from ports of upstream's definitions: the port's helper still taking it and the "
                               "port's callers still passing it are behind as a pair, wiring inside the copy and "
                               "no input of an entry point the engine calls, so for a reader (at most NEEDS_REVIEW)",
                               [upstream] + _tree_param_evidence(port, name, f"the port still takes {name}"),
                               rule="removed-internal-parameter"))
        elif port.param(name) is not None:
            items.append(Delta("behind", "signature", f"{kind} {name} was removed upstream, the port still takes it",
                                    [upstream] + _tree_param_evidence(port, name, f"the port still takes {name}")))
        elif (extra := _port_takes_more(old, new, port, name, scope, same_language)) is not None:
            items.append(Delta("undecided", "signature",
                               f"upstream removed {kind} {name} and the port takes no parameter of that name, but "
                               f"it takes {extra[0]} {extra[2]} parameters where upstream's new definition takes "
                               f"{extra[1]}: one of the port's own names may still stand for {name}, so for a "
                               "reader (at most NEEDS_REVIEW), never IN_SYNC by absence",
                               [upstream, Evidence(kind=Kind.TREE_SIGNATURE, message=f"the port's parameters, "
                                                   f"{extra[0]} {extra[2]}", side="tree", path=port.path,
                                                   line=port.start_line, quote=_signature_line(port),
                                                   symbol=port.name)],
                               rule="removed-parameter-role"))
        else:
            items.append(Delta("sync", "signature", f"the port does not take removed {kind} {name}", [upstream],
                               absent=(name,)))
    for name in new_names:
        if name in old_names or name in renamed.values():
            continue
        param = new.param(name)
        label = f"{name}{'=default' if param and param.has_default else ''}"
        upstream = _upstream_param_evidence(new, name, "upstream-new", Kind.PARAM_ADDED,
                                            f"upstream added {_param_kind(param)} {label}")
        if name in scope:
            items.append(Delta("not-carried", "signature", name, [upstream]))
        elif port.param(name) is not None:
            items.append(Delta("sync", "signature", f"the port already takes {label}",
                                    [upstream] + _tree_param_evidence(port, name, f"the port takes {name}")[:1]))
        elif _returned_instead(new, port, name):
            items.append(Delta("sync", "signature", f"the port returns what out-parameter {name} carries",
                                    [upstream, _out_param_evidence(new, port, name)]))
        else:
            lacks = Evidence(kind=Kind.TREE_SIGNATURE, message=f"the port's parameters lack {name}", side="tree",
                             path=port.path, line=port.start_line, quote=_signature_line(port), symbol=port.name)
            shared = len(set(old_names) & set(port.param_names))
            derived = derivation(name) if derivation and not (param is not None and param.heuristic) else None
            if derived is not None and derived.derived:
                # An argument computed only from shapes, constants and values
                # the kernel already receives is how upstream implements the
                # kernel, not an input the port's callers must now supply:
                # typed as derived, never as something the port lacks.
                mine = Evidence(kind=Kind.TREE_SIGNATURE, message=f"the port's own parameters, compared: {name} is "
                                "derived upstream, not an input its callers supply", side="tree", path=port.path,
                                line=port.start_line, quote=_signature_line(port), symbol=port.name)
                derived_params.append((f"{_param_kind(param)} {label}", derived,
                                       [upstream, mine, _derivation_evidence(derived, name, "upstream", new.path, new.name)]))
            elif instance is not None and instance(name, "new"):
                items.append(_instance_item(name, _param_kind(param), "added", instance(name, "new"), upstream, port))
            elif internal is not None and param is not None and not param.constexpr and new.is_kernel \
                    and (launchers := internal(name)):
                items.append(Delta("undecided", "signature",
                                   f"upstream added {_param_kind(param)} {label}, which only its own launchers pass "
                                   f"({', '.join(launchers[:3])}), each updated in this commit with its own "
                                   "parameters unchanged, and the tree launches the port only from copies of those "
                                   "launchers in the port's own file: how the copied code is wired inside, not an "
                                   "input the engine supplies, so for a reader (at most NEEDS_REVIEW)",
                                   [upstream, lacks], rule="copied-launcher-parameter"))
            elif internal is not None and param is not None and not param.constexpr and (quotes := internal(name)):
                items.append(Delta("undecided", "signature",
                                   f"upstream added {_param_kind(param)} {label}, which only its own callers supply, "
                                   f"each from a local it declares (`{'`; `'.join(quotes[:2])}`) with its own "
                                   "parameters unchanged, and the tree calls the port only from ports of those "
                                   "callers: how the copied code is wired inside, not an input the port's callers "
                                   "supply, so for a reader (at most NEEDS_REVIEW)", [upstream, lacks],
                                   rule="internal-parameter"))
            elif computed is not None and param is not None and not param.constexpr and (quotes := computed(name)):
                items.append(Delta("undecided", "signature",
                                   f"upstream added {_param_kind(param)} {label}, which only upstream's own callers "
                                   f"bind, each to a constant or a value it computes itself ({'; '.join(quotes[:3])}), "
                                   "and the tree calls the port only from ports of upstream's definitions: no input "
                                   "of an entry point the engine calls changes, so it is how the copied code is wired "
                                   "inside; what the body does with it is for a reader (at most NEEDS_REVIEW)",
                                   [upstream, lacks], rule="computed-internal-parameter"))
            elif old_names and shared * 2 < len(old_names):
                # A port that shares under half of upstream's parameters is a
                # redesign (a different tiling, a fused kernel): that it lacks
                # a new upstream parameter says nothing about its shape.
                items.append(Delta("undecided", "signature",
                                        f"upstream added {_param_kind(param)} {label}; the port shares only {shared} of "
                                        f"upstream's {len(old_names)} parameters (a redesign), so whether it needs "
                                        f"{name} is for a reader", [upstream, lacks], rule="redesigned-port"))
            elif param is not None and param.heuristic:
                # No launch passes it: the decorator derives it from
                # arguments the kernel already receives.
                items.append(Delta("undecided", "signature",
                                   f"upstream added {_param_kind(param)} {label}, which a @triton.heuristics decorator "
                                   "computes from the kernel's own arguments; no caller passes it, so it is an "
                                   "implementation detail for a reader to judge", [upstream, lacks],
                                   rule="heuristic-parameter"))
            elif param is not None and new.language == "python" and new.kind == KIND_TRITON_KERNEL \
                    and name in new.dead_params and name not in new.heuristic_reads and name in new.tuner_reads:
                items.append(Delta("undecided", "signature",
                                   f"upstream added {_param_kind(param)} {label}, which the kernel's body never "
                                   "reads (nor a @triton.heuristics lambda): it changes no value the kernel "
                                   "computes, only what an autotuner may key or prune on, so for a reader (at "
                                   "most NEEDS_REVIEW)", [upstream, lacks], rule="unread-kernel-parameter"))
            elif param is not None and new.language == "python" and not new.is_kernel \
                    and name in new.forwarded_unread:
                items.append(Delta("undecided", "signature",
                                   f"upstream added {_param_kind(param)} {label}, which the definition only hands "
                                   "to its launch, filling a parameter the kernel's body never reads (nor a "
                                   "@triton.heuristics lambda): no value computed depends on it, so for a reader "
                                   "(at most NEEDS_REVIEW)", [upstream, lacks], rule="unread-kernel-parameter"))
            elif param is not None and param.has_default and new.language == "python" \
                    and new.kind == KIND_TRITON_KERNEL and name in new.hint_only:
                items.append(Delta("undecided", "signature",
                                   f"upstream added {_param_kind(param)} {label}, which the kernel's body reads only "
                                   "as a memory hint (eviction_policy, cache_modifier): whatever its value the "
                                   "kernel computes the same values and no launch must pass it, so only speed may "
                                   "differ, for a reader (at most NEEDS_REVIEW)", [upstream, lacks],
                                   rule="hint-parameter"))
            elif param is not None and param.has_default and new.language == old.language == "python" \
                    and new.kind == KIND_TRITON_KERNEL and old.body_lines \
                    and _default_path_is_old(name, old, new):
                items.append(Delta("undecided", "signature",
                                   f"upstream added {_param_kind(param)} {label}, which the kernel reads only as "
                                   "the condition of `if` statements where its default runs code the kernel already "
                                   "had and the other branches hold only new code: at the default it computes what "
                                   "it computed before and no launch must pass it, so an interface addition for a "
                                   "reader (at most NEEDS_REVIEW)", [upstream, lacks],
                                   rule="default-selector-parameter"))
            elif param is not None and param.name.startswith("**") and param.normalised not in new.first_use:
                # A keyword catch-all nothing in the body reads: every call the
                # port's signature accepts computes the same, and what it now
                # swallows selects nothing.
                items.append(Delta("undecided", "signature",
                                   f"upstream added {label}, a keyword catch-all its body never reads: every call the "
                                   "port accepts computes what it did and the keywords it swallows select nothing, so "
                                   "for a reader (at most NEEDS_REVIEW)", [upstream, lacks], rule="unread-catch-all"))
            else:
                items.append(Delta("behind", "signature",
                                        f"upstream added {_param_kind(param)} {label}, the port lacks it", [upstream, lacks]))
    if derived_params:
        # One record for them all, quoting each derivation: that the values
        # are computed from what the kernel receives is the whole argument.
        how = "; ".join(f"{label} {_derivation_words(derived)}" for label, derived, _ in derived_params)
        items.append(Delta("undecided", "signature",
                           f"upstream added {len(derived_params)} parameter{'s' if len(derived_params) > 1 else ''} "
                           f"computed only from what the kernel already receives, {how}; an implementation detail "
                           "for a reader to judge (at most NEEDS_REVIEW)",
                           [e for *_, evidence in derived_params for e in evidence],
                           rule=derivation_rule(derived for _, derived, _ in derived_params)))
    defaults = len(items)
    for name in new_names:
        if name not in old_names:
            continue
        before, after = old.param(name), new.param(name)
        if before and after and before.has_default != after.has_default and name not in scope:
            mine = port.param(name)
            message = f"{name} {'gained' if after.has_default else 'lost'} its default upstream"
            upstream = _upstream_param_evidence(new, name, "upstream-new", Kind.DEFAULT_CHANGED, message)
            if mine is None:
                items.append(Delta("undecided", "signature", f"{message} and the port has no {name}", [upstream]))
            elif mine.has_default == after.has_default:
                items.append(Delta("sync", "signature", f"the port's {name} already matches", [upstream]))
            elif before.has_default and mine.has_default:
                # ``kept-default``: upstream's callers must now pass it, and the port still accepts them
                # all; what the dropped fallback computed is body, for a reader.
                items.append(Delta("undecided", "signature",
                                   f"{message}, so its callers must pass it; the port keeps its default and so still "
                                   "accepts every call upstream accepts: not behind on the interface, and the dropped "
                                   "fallback is for a reader to judge",
                                   [upstream] + _tree_param_evidence(port, name, f"the port's {name}")[:1],
                                   rule="kept-default"))
            elif after.has_default and forwarded is not None and (passed := forwarded(name)):
                # ``forwarded-default``: every path hands the default to the old body, which requires it.
                items.append(Delta("undecided", "signature",
                                   f"{message}, but every path of the definition either raises or hands it unchanged "
                                   "to the body this commit extracted, which still takes it with no default and "
                                   "reads it in no branch: a call omitting it computes nothing the port does not "
                                   "when passed the same value, so the port's lacking the default is for a reader",
                                   [upstream] + passed + _tree_param_evidence(port, name, f"the port's {name}")[:1],
                                   rule="forwarded-default"))
            else:
                items.append(Delta("behind", "signature", f"{message}, the port's has not",
                                        [upstream] + _tree_param_evidence(port, name, f"the port's {name}")[:1]))
    _ruled(items[defaults:], "parameter-default")
    if not same_language:
        items += _ruled(_cross_language_constexpr_items(old, new, port, scope), "compile-time-parameter")
    dead = len(items)
    newly_dead = [n for n in new.dead_params if n not in old.dead_params and n in old_names]
    for name in newly_dead:
        use = old.first_use.get(name)
        written = new.param(name).name if new.param(name) else name
        upstream = [Evidence(kind=Kind.PARAM_DEAD, message=f"upstream now leaves {name} unused", side="upstream-new",
                             path=new.path, line=new.param(name).line if new.param(name) else new.start_line,
                             quote=new.param(name).quote if new.param(name) else None, symbol=new.name,
                             subject=written)]
        if use is not None:
            upstream.append(Evidence(kind=Kind.PARAM_USE_REMOVED, message=f"upstream used {name} here before",
                                     side="upstream-old", path=old.path, line=use.line, quote=use.quote,
                                     symbol=old.name, subject=written))
        if name in scope:
            items.append(Delta("not-carried", "signature", name, upstream))
        elif port.param(name) is None:
            items.append(Delta("sync", "signature", f"the port already dropped dead parameter {name}", upstream))
        elif name in port.dead_params:
            items.append(Delta("sync", "signature", f"the port also leaves {name} unused", upstream))
        elif new.is_kernel and derivation is not None and (derived := derivation(name)) is not None \
                and derived.derived and not derived.allocations:
            # ``derived-parameter``: every launch fills it with a value the wrapper computes itself; the kernel
            # no longer specialising on it is a body change of the pair, not an input a caller supplies.
            items.append(Delta("undecided", "signature",
                               f"{name} is dead upstream and the port still uses it, but upstream's launch computes it "
                               f"only from shapes, constants and values the kernel already receives, "
                               f"{_derivation_words(derived)}: no caller supplies it, so the kernel no longer "
                               "reading it is a body change of the wrapper and kernel pair for a reader (at most "
                               "NEEDS_REVIEW)",
                               upstream + [_derivation_evidence(derived, name, "upstream's launch", new.path,
                                                                new.name)]
                               + _tree_param_evidence(port, name, f"the port still takes {name}"),
                               rule=derivation_rule([derived])))
        else:
            items.append(Delta("behind", "signature", f"{name} is dead upstream, the port still takes and uses it",
                                    upstream + _tree_param_evidence(port, name, f"the port still takes {name}")))
    _ruled(items[dead:], "dead-input")
    items += _ruled(_revived_items(old, new, port, scope, old_names, selects), "revived-input")
    return _ruled(items, "parameter-change")


def _revived_items(old: Signature, new: Signature, port: Signature, scope: set[str], old_names,
                   selects) -> list[Delta]:
    """Rule ``revived-input``: a Python host's parameter dead before the commit that the new body reads in a
    branch condition (``selects(name)``, the use), which the port takes and leaves unread, undeclared."""
    if selects is None or new.is_kernel or old.is_kernel or new.language != "python" or old.language != "python":
        return []
    items: list[Delta] = []
    for name in old.dead_params:
        if name in new.dead_params or name not in old_names or new.param(name) is None or name in scope:
            continue
        mine = port.param(name)
        if mine is None or name not in port.dead_params or port.is_kernel:
            continue
        use = selects(name)
        if use is None:
            continue
        written = new.param(name).name
        items.append(Delta("behind", "signature",
                           f"{written} was accepted and never read upstream, and now selects a path "
                           f"(`{use.quote}`); the port still takes {mine.name} and never reads it, so a caller "
                           "passing another value gets the old path from the port",
                           [Evidence(kind=Kind.BODY, message=f"upstream now branches on {written}",
                                     side="upstream-new", path=new.path, line=use.line, quote=use.quote,
                                     symbol=new.name, subject=written)]
                           + _tree_param_evidence(port, name, f"the port takes {mine.name} and never reads it")[:1]))
    return items


_BRANCHES = ("if_statement", "elif_clause", "conditional_expression")
_COMPUTING = ("assignment", "augmented_assignment", "return_statement")


def branch_read(definition, name: str) -> Use | None:
    """The first branch condition of a Python definition's syntax node (``if``, ``elif``, a conditional
    expression) that reads the parameter ``name`` (normalised) and selects a value: a conditional
    expression, or a block that binds or returns one (a block that only raises, logs or calls selects no
    result), as a ``Use``; None if none."""
    if definition is None:
        return None
    for node in nodes_of(definition, _BRANCHES, "python"):
        if node.type == "conditional_expression":
            parts = [c for c in node.children if c.is_named]
            condition = parts[1] if len(parts) == 3 else None
        else:
            condition = node.child_by_field_name("condition")
            block = node.child_by_field_name("consequence")
            if block is None or not nodes_of(block, _COMPUTING, "python"):
                continue
        if condition is None:
            continue
        reads = [condition] if condition.type == "identifier" else nodes_of(condition, ("identifier",), "python")
        for identifier in reads:
            parent = identifier.parent
            if parent is not None and parent.type == "attribute" and parent.child_by_field_name("attribute") == identifier:
                continue  # ``obj.name`` reads obj's attribute, not the parameter
            if parent is not None and parent.type == "keyword_argument" and parent.child_by_field_name("name") == identifier:
                continue
            if normalise_name(node_text(identifier)) == name:
                line = condition.start_point[0] + 1
                quote = node_text(condition).splitlines()[0].strip() if node_text(condition) else ""
                return Use(line=line, quote=quote)
    return None


def forwarded_only(definition, name: str, helpers) -> list[tuple[str, int | str, Use]] | None:
    """Rule ``forwarded-default``: where every ``return`` of a Python definition's syntax node returns a call
    of one of ``helpers`` (bare names) passing the parameter ``name`` (normalised) on unchanged, those being
    its only reads, and the body cannot end but by such a return or a ``raise``: each call's helper, how it
    binds the parameter (a position or a keyword) and where. None otherwise."""
    body = _function_body(definition)
    if body is None or nodes_of(body, ("function_definition", "lambda", "yield"), "python"):
        return None
    passed: list[tuple[str, int | str, Use]] = []
    forwarding: set[int] = set()
    for returned in nodes_of(body, ("return_statement",), "python"):
        call = next((c for c in returned.named_children if c.type != "comment"), None)
        callee = call.child_by_field_name("function") if call is not None and call.type == "call" else None
        if callee is None or callee.type != "identifier" or node_text(callee) not in helpers:
            return None
        arguments = call.child_by_field_name("arguments")
        binding = value = None
        listed = [c for c in arguments.named_children if c.type != "comment"] if arguments is not None else []
        for position, argument in enumerate(listed):
            if argument.type in ("list_splat", "dictionary_splat"):
                return None
            keyword = argument.type == "keyword_argument"
            candidate = argument.child_by_field_name("value") if keyword else argument
            if candidate is not None and candidate.type == "identifier" and normalise_name(node_text(candidate)) == name:
                binding = node_text(argument.child_by_field_name("name")) if keyword else position
                value = candidate
                break
        if binding is None:
            return None
        forwarding.add(value.id)
        passed.append((node_text(callee), binding, Use(line=returned.start_point[0] + 1,
                                                      quote=node_text(returned).splitlines()[0].strip())))
    reads = [i for i in nodes_of(body, ("identifier",), "python") if normalise_name(node_text(i)) == name
             and not is_field_or_keyword(i)]
    if not passed or any(i.id not in forwarding for i in reads) or not _ends_every_path(body):
        return None
    return passed


def _ends_every_path(block) -> bool:
    """Whether a Python block cannot end but by a ``return`` or a ``raise``: its last statement is one, or
    an ``if`` with an ``else`` each of whose blocks cannot."""
    statements = [c for c in block.named_children if c.type != "comment"]
    last = statements[-1] if statements else None
    if last is None:
        return False
    if last.type in ("return_statement", "raise_statement"):
        return True
    if last.type != "if_statement":
        return False
    blocks = [last.child_by_field_name("consequence")]
    alternatives = [c for c in last.named_children if c.type in ("elif_clause", "else_clause")]
    if not alternatives or alternatives[-1].type != "else_clause":
        return False
    blocks += [c.child_by_field_name("consequence") or c.child_by_field_name("body") for c in alternatives]
    return all(b is not None and _ends_every_path(b) for b in blocks)


def _cross_language_constexpr_items(old: Signature, new: Signature, port: Signature, scope: set[str]) -> list[Delta]:
    """C++ non-type template parameters against ``tl.constexpr`` (or the
    other way round). Both specialise a kernel at compile time, but a port
    in another language tiles its own way, so only a match by name decides
    (IN_SYNC); a template parameter the port lacks, or one upstream dropped
    that the port still takes, is for a reader, never a gap by itself."""
    items: list[Delta] = []
    was = {p.normalised for p in old.params if p.constexpr}
    now = {p.normalised for p in new.params if p.constexpr}
    for name in sorted(now - was - scope):
        param = new.param(name)
        upstream = _upstream_param_evidence(new, name, "upstream-new", Kind.PARAM_ADDED,
                                            f"upstream added constexpr parameter {name}")
        if port.param(name) is not None:
            items.append(Delta("sync", "signature", f"the port already takes constexpr {name}",
                                    [upstream] + _tree_param_evidence(port, name, f"the port takes {name}")[:1]))
        elif (own := equivalence.port_input_for_flag(name, old, port)) is not None:
            items.append(Delta("sync", "signature", f"upstream added the flag {name}, which the port already takes as "
                               f"its input {own} (the flag's name without its prefix, an input upstream did not have)",
                               [upstream] + _tree_param_evidence(port, own, f"the port takes {own}")[:1],
                               rule="port-has-flag"))
        else:
            items.append(Delta("undecided", "signature",
                                    f"upstream added {'template' if new.language == 'cpp' else 'constexpr'} parameter "
                                    f"{name}{'=default' if param and param.has_default else ''}; the "
                                    f"{port.language} port has no parameter of that name, and across languages a "
                                    "compile-time specialisation need not correspond, so it is for a reader",
                                    [upstream]))
    for name in sorted(was - now - scope):
        if port.param(name) is not None:
            items.append(Delta("undecided", "signature",
                                    f"upstream dropped constexpr parameter {name}; the port still takes {name}",
                                    [_upstream_param_evidence(old, name, "upstream-old", Kind.PARAM_REMOVED,
                                                              f"upstream removed constexpr parameter {name}")]
                                    + _tree_param_evidence(port, name, f"the port still takes {name}")[:1]))
    return items


def _param_kind(param) -> str:
    """How a message names a parameter: constexpr ones (``tl.constexpr``, C++
    non-type template parameters) are flagged, they specialise the kernel."""
    return "constexpr parameter" if param is not None and param.constexpr else "parameter"


def _signature_line(signature: Signature) -> str | None:
    return signature.params[0].quote if signature.params else None


def _first_line_quote(definition, signature) -> str | None:
    if signature is not None and signature.params:
        return signature.params[0].quote
    return None


# --- a parameter a class's own method computes for another of its methods ----------


def _class_body(module, class_name: str):
    """The body of the one top-level class ``class_name`` of ``module``, or None."""
    found = []
    for child in module.named_children if module is not None else ():
        node = child.child_by_field_name("definition") if child.type == "decorated_definition" else child
        if node is not None and node.type == "class_definition" and node_text(node.child_by_field_name("name")) == class_name:
            found.append(node.child_by_field_name("body"))
    return found[0] if len(found) == 1 else None


def _methods(body) -> dict[str, object]:
    """Name -> function node of each method defined directly in a class body (a name defined twice: absent)."""
    methods: dict[str, object] = {}
    twice: set[str] = set()
    for child in body.named_children if body is not None else ():
        node = child.child_by_field_name("definition") if child.type == "decorated_definition" else child
        if node is not None and node.type == "function_definition":
            name = node_text(node.child_by_field_name("name"))
            (twice.add(name) if name in methods else methods.__setitem__(name, node))
    return {n: f for n, f in methods.items() if n not in twice}


def _parameter_list(function) -> list[str]:
    params = function.child_by_field_name("parameters")
    out = []
    for child in params.named_children if params is not None else ():
        name = child if child.type == "identifier" else child.child_by_field_name("name") or next(
            (c for c in child.named_children if c.type == "identifier"), None)
        out.append(node_text(name) if name is not None else node_text(child))
    return out


def instance_computed(module, class_name: str, method: str, slot: str, other_module) -> tuple[str, ...] | None:
    """How every call of method ``method`` of top-level class ``class_name`` in ``module`` computes the
    argument for its parameter ``slot`` (normalised name): the quoted local assignments of the calling
    methods, or None unless all of these hold (``instance-derived-parameter``):

    - every read of the name ``method`` in the module is ``self.method(...)`` called inside another
      method of the same class (nothing outside the class binds its parameters), and there is one;
    - at every such call the argument for ``slot`` (by keyword, or by its position after ``self``) is a
      local of the calling method, bound by an assignment in its body and never one of its parameters;
    - the calling method takes the same parameters in ``other_module``'s class (the other side of the
      commit): its callers supply what they supplied, so the value is computed from that.
    """
    body = _class_body(module, class_name)
    others = _methods(_class_body(other_module, class_name))
    methods = _methods(body)
    own = methods.get(method)
    if body is None or own is None:
        return None
    if _mangled(class_name, method) in {node_text(n) for n in nodes_of(module, ("identifier",), "python")}:
        return None  # a private method called by its mangled name, from outside the class
    position = parameter_position(own, slot)
    quotes: list[str] = []
    calls = 0
    for identifier in nodes_of(module, ("identifier",), "python"):
        if node_text(identifier) != method:
            continue
        parent = identifier.parent
        if parent is not None and parent.type == "function_definition" and parent.id == own.id:
            continue  # the definition's own name
        if has_ancestor(identifier, ("decorator",)):
            continue  # a decorator names what wraps a definition (``@cute.kernel``), never calls this method
        home = _enclosing_class(identifier)
        if home is not None and home.id != body.parent.id and method in _methods(home.child_by_field_name("body")):
            continue  # another class's own method of the same name (``self.kernel`` there is that one)
        if parent is None or parent.type != "attribute" or parent.child_by_field_name("attribute") is None \
                or parent.child_by_field_name("attribute").id != identifier.id \
                or node_text(parent.child_by_field_name("object")) not in ("self", class_name):
            return None
        through_class = node_text(parent.child_by_field_name("object")) == class_name
        if through_class and not _static(own):
            return None  # ``Cls.method(...)`` binds ``self`` to the first argument unless the method is static
        call = parent.parent
        if call is None or call.type != "call" or call.child_by_field_name("function").id != parent.id:
            return None
        caller = call.parent
        while caller is not None and caller.type not in ("function_definition", "class_definition", "lambda"):
            caller = caller.parent
        if caller is None or caller.type != "function_definition":
            return None
        name = node_text(caller.child_by_field_name("name"))
        if methods.get(name) is None or methods[name].id != caller.id or name == method:
            return None
        if name not in others or _parameter_list(others[name]) != _parameter_list(caller):
            return None
        arguments = call.child_by_field_name("arguments")
        listed = [a for a in arguments.named_children if a.type != "comment"] if arguments is not None else []
        chosen = next((a.child_by_field_name("value") for a in listed if a.type == "keyword_argument"
                       and normalise_name(node_text(a.child_by_field_name("name"))) == slot), None)
        positional = [a for a in listed if a.type != "keyword_argument"]
        shift = 0 if through_class else 1  # ``self`` is no argument of the call
        if chosen is None and position is not None and shift <= position < len(positional) + shift:
            chosen = positional[position - shift]
        stored = _context_stored(chosen, caller, body, others) if chosen is not None else None
        if stored is not None:
            calls += 1
            quotes += [q for q in stored if q not in quotes]
            continue
        if chosen is None or chosen.type != "identifier" or node_text(chosen) in _python_parameters(caller):
            return None
        assignments = PythonLocals(caller)
        reaching, _ = assignments.reaching(node_text(chosen), chosen)
        if not reaching or _reads_a_parameter(chosen, _python_parameters(caller) - {"self"}, assignments, set()):
            return None
        calls += 1
        quotes += [" ".join(node_text(statement).split()) for statement, _ in reaching]
    return tuple(dict.fromkeys(quotes)) if calls else None


def _static(function) -> bool:
    """Whether ``function`` (a method's node) is decorated ``@staticmethod``."""
    decorated = function.parent
    return decorated is not None and decorated.type == "decorated_definition" and any(
        node_text(d).strip() == "@staticmethod" for d in decorated.named_children if d.type == "decorator")


def _mangled(class_name: str, method: str) -> str | None:
    """The name Python gives private method ``method`` of ``class_name`` outside the class (``_Cls__m``)."""
    if not method.startswith("__") or method.endswith("__"):
        return None
    return f"_{class_name.lstrip('_')}{method}"


_STORING_METHODS = ("setup_context", "forward")
"""The methods of an autograd ``Function`` that receive the context before ``backward`` does."""


def _context_stored(argument, caller, body, others: dict) -> tuple[str, ...] | None:
    """Rule ``context-derived-parameter``: the quoted assignments by which the class's own ``setup_context`` or
    ``forward`` stores ``argument`` (``ctx.NAME``, read in the class's ``backward`` from its context parameter) on
    the autograd context, or None unless the class derives from a ``Function``, ``caller`` is its ``backward``,
    some storing method assigns ``ctx.NAME`` and every storing method keeps its parameters on the other side of
    the commit (what ``apply``'s callers bind is unchanged, so the stored value is one they already supply)."""
    if argument.type != "attribute" or node_text(caller.child_by_field_name("name")) != "backward":
        return None
    holder, attribute = argument.child_by_field_name("object"), argument.child_by_field_name("attribute")
    listed = _parameter_list(caller)
    if holder is None or attribute is None or holder.type != "identifier" or not listed or node_text(holder) != listed[0]:
        return None
    cls = body.parent
    bases = cls.child_by_field_name("superclasses") if cls is not None else None
    if bases is None or not any(node_text(b).split(".")[-1] == "Function" for b in bases.named_children):
        return None
    methods = _methods(body)
    quotes: list[str] = []
    for name in _STORING_METHODS:
        storing = methods.get(name)
        if storing is None:
            continue
        if name not in others or _parameter_list(others[name]) != _parameter_list(storing):
            return None
        context = (_parameter_list(storing) or [None])[0]
        for assignment in nodes_of(storing, ("assignment",), "python"):
            target = assignment.child_by_field_name("left")
            if target is not None and target.type == "attribute" \
                    and node_text(target.child_by_field_name("object")) == context \
                    and node_text(target.child_by_field_name("attribute")) == node_text(attribute):
                quotes.append(" ".join(node_text(assignment).split()))
    if "forward" not in methods:
        return None
    return tuple(quotes) or None


def stored_on_context(quotes) -> bool:
    """Whether ``instance_computed``'s ``quotes`` include a context assignment (``ctx.NAME = ...``):
    the rule is then ``context-derived-parameter``."""
    return any(re.match(r"[A-Za-z_]\w*\.[A-Za-z_]\w*\s*=[^=]", q) for q in quotes)


def _reads_a_parameter(node, parameters: set[str], assignments, seen: set[str]) -> bool:
    """Whether ``node``, followed through the local assignments that reach it, reads one of
    ``parameters`` as a value (a caller's input handed on), rather than only an attribute of it
    (``x.shape``, ``x.element_type``) or whether it is None. A comprehension's variable over
    parameters is read under the same rule."""
    for identifier in nodes_of(node, ("identifier",), "python"):
        name = node_text(identifier)
        parent = identifier.parent
        clause = _for_clause_over(identifier)
        if clause is not None:
            variable = clause.child_by_field_name("left")
            if variable is None:
                return True
            if f"#{clause.id}" not in seen:  # the comprehension's body, read once, its variable as a parameter
                seen.add(f"#{clause.id}")
                if _reads_a_parameter(clause.parent, {node_text(variable)}, assignments, seen):
                    return True
            continue
        if name in parameters:
            if parent is not None and parent.type == "attribute" and parent.child_by_field_name("object") is not None \
                    and parent.child_by_field_name("object").id == identifier.id:
                continue
            if parent is not None and parent.type == "comparison_operator" and "None" in node_text(parent):
                continue
            if parent is not None and parent.type == "for_in_clause" and parent.child_by_field_name("left") is not None \
                    and parent.child_by_field_name("left").id == identifier.id:
                continue
            return True
        if name in seen or (parent is not None and parent.type == "attribute"
                            and parent.child_by_field_name("attribute") is not None
                            and parent.child_by_field_name("attribute").id == identifier.id):
            continue
        reaching, _ = assignments.reaching(name, identifier)
        if reaching:
            seen.add(name)
            if any(right is None or _reads_a_parameter(right, parameters, assignments, seen) for _, right in reaching):
                return True
    return False


def _for_clause_over(identifier):
    """The comprehension clause whose iterable lists ``identifier`` directly (``for t in [a, b]``), or None."""
    parent = identifier.parent
    if parent is None or parent.type not in ("list", "tuple"):
        return None
    clause = parent.parent
    if clause is not None and clause.type == "for_in_clause" and clause.child_by_field_name("right") is not None \
            and clause.child_by_field_name("right").id == parent.id:
        return clause
    return None


def _enclosing_class(node):
    current = node.parent
    while current is not None:
        if current.type == "class_definition":
            return current
        current = current.parent
    return None


def context_form_changed(old, new) -> bool:
    """Rule ``autograd-context``: whether an autograd ``forward`` (old and new ``Definition``) moved between
    PyTorch's two forms, taking the context as its first parameter on one side only, so its signature was read
    without that parameter on that side."""
    if old is None or new is None or old.node is None or new.node is None:
        return False
    return autograd_context(old.node) != autograd_context(new.node)


def _dtype_keyed(call, parameters: set[str]) -> bool:
    """Rule ``derived-parameter`` (a value keyed by a dtype): ``call`` is a module-level helper (``util.acc_type(x.dtype)``, ``f(x.dtype)``,
    its callee's root no parameter of the launching function) applied to one argument only, the ``dtype`` of one
    of the function's parameters: the value it passes is chosen by the input's element type, which the kernel
    already receives with the tensor, not an input a caller supplies."""
    callee = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    if callee is None or arguments is None or callee.type not in ("identifier", "attribute"):
        return False
    if node_text(callee).split(".")[0] in parameters:
        return False
    given = [a for a in arguments.named_children if a.type != "comment"]
    if len(given) != 1 or given[0].type != "attribute":
        return False
    obj, attribute = given[0].child_by_field_name("object"), given[0].child_by_field_name("attribute")
    return obj is not None and obj.type == "identifier" and node_text(obj) in parameters \
        and attribute is not None and node_text(attribute) == "dtype"


_FIXED_FLOATING = frozenset({"float", "double"})


def _template_type_names(node) -> set[str]:
    """The type parameter names of the C++ template declaration ``node`` (empty for a plain definition)."""
    if node is None or node.type != "template_declaration":
        return set()
    listed = node.child_by_field_name("parameters")
    return {n.text.decode("utf-8", errors="replace") for c in (listed.named_children if listed is not None else [])
            if c.type in ("type_parameter_declaration", "optional_type_parameter_declaration")
            for n in c.named_children if n.type == "type_identifier"}


def _by_value(parameter) -> tuple[str, str, tuple[str, ...]] | None:
    """(type, name, qualifiers) of a by-value C++ parameter declaration; None for a pointer, reference,
    array or unnamed one."""
    if parameter.type != "parameter_declaration":
        return None
    kind, name = parameter.child_by_field_name("type"), parameter.child_by_field_name("declarator")
    if kind is None or name is None or name.type != "identifier":
        return None
    qualifiers = tuple(sorted(c.text.decode() for c in parameter.children if c.type == "type_qualifier"))
    return kind.text.decode("utf-8", errors="replace"), name.text.decode("utf-8", errors="replace"), qualifiers


def template_retyped_parameters(old_node, new_node, port_node) -> list[tuple[str, str, str]] | None:
    """Rule ``kernel-parameter-type``: (name, old type, new type) of each by-value parameter of a C++ kernel
    retyped from one of its template type parameters to a fixed floating type, every other parameter the
    same text, where the port's parameter in the same position is by value and typed by one of the port's
    template type parameters; None when there is none or anything else about the parameters changed."""
    olds, news, mine = (cpp_parameter_declarations(n) for n in (old_node, new_node, port_node))
    if olds is None or news is None or mine is None or len(olds) != len(news):
        return None
    templated, ported = _template_type_names(old_node), _template_type_names(port_node)
    found: list[tuple[str, str, str]] = []
    for position, (before, after) in enumerate(zip(olds, news)):
        if before.text == after.text:
            continue
        was, now = _by_value(before), _by_value(after)
        if was is None or now is None or was[1:] != now[1:] or was[0] not in templated \
                or now[0] not in _FIXED_FLOATING or position >= len(mine):
            return None
        theirs = _by_value(mine[position])
        if theirs is None or theirs[0] not in ported:
            return None
        found.append((now[1], was[0], now[0]))
    return found or None



_PY_LITERALS = frozenset({"true", "false", "none", "integer", "float", "string"})


def _python_constant(node) -> bool:
    """A Python literal: ``True``, ``False``, ``None``, a number (signed) or a plain string."""
    if node.type == "unary_operator" and node.child_count == 2:
        return node.children[1].type in ("integer", "float")
    return node.type in _PY_LITERALS and not (node.type == "string" and any(c.type == "interpolation"
                                                                             for c in node.children))


def _qualified_caller(function) -> str:
    names = []
    current = function
    while current is not None:
        if current.type in ("function_definition", "class_definition"):
            name = current.child_by_field_name("name")
            names.append(node_text(name) if name is not None else "")
        current = current.parent
    return ".".join(reversed(names))


def computed_bindings(root, function: str, name: str, position: int):
    """Rule ``computed-internal-parameter``: how each call of Python function ``function`` (``f(...)`` or
    ``x.f(...)``) under ``root`` binds its parameter ``name`` (at ``position`` among the parameters a call
    binds positionally, -1 when that cannot be told): a list of (the qualified name of the function the call
    lies in, the binding quoted, or "" when the call leaves it unbound, and whether the binding hands on, as
    it is, a parameter of that function itself that its body never rebinds). None when any call cannot be
    read (a splat, the function named other than as a callee, a call at module level binding it, a
    positional argument at an unknown position) or binds anything but a constant, a name that is no
    parameter of the function the call lies in, or such a parameter handed on as it is (a parameter of a
    function around it, or one rebound, is an input of its own)."""
    found = []
    for current in nodes_of(root, ("identifier",), "python"):
        if node_text(current) != function:
            continue
        parent = current.parent
        if parent is not None and parent.type == "attribute":
            if parent.child_by_field_name("attribute") != current:
                continue  # ``function.x``: another binding's attribute
            current, parent = parent, parent.parent
        if parent is None:
            return None
        if parent.type in ("function_definition", "class_definition") and parent.child_by_field_name("name") == current:
            continue
        if parent.type in ("dotted_name", "aliased_import", "import_from_statement", "import_statement"):
            continue
        if parent.type == "keyword_argument" and parent.child_by_field_name("name") == current:
            continue
        if parent.type != "call" or parent.child_by_field_name("function") != current:
            return None
        arguments = parent.child_by_field_name("arguments")
        if arguments is None or arguments.type != "argument_list":
            return None
        value = None
        ordinal = 0
        for argument in arguments.named_children:
            if argument.type == "comment":
                continue
            if argument.type in ("list_splat", "dictionary_splat"):
                return None
            if argument.type == "keyword_argument":
                keyword = argument.child_by_field_name("name")
                if keyword is not None and node_text(keyword) == name:
                    value = argument.child_by_field_name("value")
                continue
            if position < 0:
                return None
            if ordinal == position:
                value = argument
            ordinal += 1
        caller = enclosing_function_node(parent)
        if value is None:
            found.append((_qualified_caller(caller) if caller is not None else None, "", False))
            continue
        if caller is None:
            return None
        if value.type == "identifier" and _handed_on(caller, node_text(value)):
            found.append((_qualified_caller(caller), node_text(value), True))
            continue
        if not _python_constant(value) and not (value.type == "identifier" and _own_value(caller, node_text(value))):
            return None
        found.append((_qualified_caller(caller), node_text(value), False))
    return found


def _handed_on(caller, name: str) -> bool:
    """``name`` is a parameter of ``caller`` itself (no function around it has one of that name) that no
    assignment, loop, ``with`` target or walrus in ``caller`` rebinds: the value its own callers bound."""
    if name not in _python_parameters(caller):
        return False
    current = caller.parent
    while current is not None:
        if current.type == "function_definition" and name in _python_parameters(current):
            return False
        current = current.parent
    for binder in nodes_of(caller, ("assignment", "augmented_assignment", "for_statement", "for_in_clause",
                                    "named_expression", "as_pattern_target", "global_statement",
                                    "nonlocal_statement"), "python"):
        if binder.type in ("as_pattern_target", "global_statement", "nonlocal_statement"):
            targets = [binder]
        else:
            target = binder.child_by_field_name("name" if binder.type == "named_expression" else "left")
            targets = [target] if target is not None else []
        for target in targets:
            if any(node_text(i) == name for i in _target_identifiers(target)) or \
                    any(c.type == "identifier" and node_text(c) == name for c in target.named_children):
                return False
    return True


def _own_value(caller, name: str) -> bool:
    """``name``, read in ``caller``, is none of the parameters of ``caller`` or of a function around it, nor
    a local of it assigned one of them as it is (a parameter handed on under another name)."""
    parameters: set[str] = set()
    current = caller
    while current is not None:
        if current.type == "function_definition":
            parameters |= _python_parameters(current)
        current = current.parent
    if name in parameters:
        return False
    for assignment in nodes_of(caller, ("assignment",), "python"):
        left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
        if left is not None and left.type == "identifier" and node_text(left) == name and right is not None \
                and right.type == "identifier" and node_text(right) in parameters:
            return False
    return True
