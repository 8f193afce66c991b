"""Branch rules: a change confined to a branch the port never runs is not the port's change (DESIGN §6).

A port runs one configuration of an upstream definition. Code upstream
compiles only under a build flag nobody sets, is not part of that
configuration, so an edit confined to it changes nothing the port runs:

* ``default-build`` (C/C++/CUDA): a preprocessor conditional on a macro that
  no source of the file defines is decided as the default build decides it:
  ``#ifdef FLAG``/``#if defined(FLAG)`` is off, ``#ifndef FLAG`` on, and a
  bare ``FLAG`` in ``#if`` is 0. Two sides of a definition whose tokens are
  equal once every such conditional is replaced by the branch the default
  build compiles differ only in code that build drops (a flag a downstream
  build sets on purpose is opt-in: the port, built by default, lacks it).
  A macro the file ``#define``\\ s anywhere, one a header the file includes
  defines (followed through the headers it includes, read from upstream at
  each side's commit: a platform switch set there from the compiler's own
  macros), one the compiler, platform or
  build system sets (``__CUDA_ARCH__``, ``_WIN32``, ``NDEBUG``: reserved
  names), and a condition the rule cannot evaluate keep the conditional
  whole, so a change under it is compared as before; and a flag the port's
  own file names is one the port may be built with, so the rule does not
  decide for it.

* ``lacked-branch`` (Python): a port runs its definition with the
  parameters it has; one it lacks takes upstream's default (with no
  default its value is not known), and one the tree declares not carried is
  off. Two sides are compared with every branch those values decide
  replaced by the branch taken (``if FLAG:``, ``if FLAG == ON:`` read
  through the module's constants, ``a if FLAG else b``), with the
  parameters the port lacks, the statements that only write them, and an
  ``if`` (its condition calling nothing) whose every branch only writes
  them left out, and with the arguments passing a declared one left out.
  Equal, the change lies in paths the port does not have. Which
  parameters the port lacks is read by name, so the rule applies only when
  every parameter of the port is one of upstream's on both sides (a
  re-implementation with its own names is compared as before), and a
  parameter the port lacks with no default must be on the old side too (a
  new required input is the parameter rules' to judge). A body upstream
  moved out of the definition the port anchors (a helper that definition
  now calls, ``moved-definition``) has no defaults of its own for what it
  is passed: a helper parameter the anchored definition passes straight
  from one of its own parameters that the port lacks takes that one's
  default, one the call leaves out takes the helper's own, and one passed
  a computed value, or a parameter the caller rebinds, is the port's input
  (not decided). There a re-implementation with its own names binds the
  anchored definition's leading parameters by position when every later
  one has a default: it is upstream called with fewer arguments. Positions
  are read where the port is taken as in sync, the scanned range's base,
  and bound by the names they had there, so a parameter upstream inserted
  in the middle since does not shift the port's inputs onto the wrong ones;
  with no base to read, or a leading name upstream no longer has, every
  upstream parameter counts as the port's input (its branches are kept). Literals
  read are booleans, numbers (``-100``), strings and ``None`` (``if x is
  not None:``), constants the module binds once, and their ``.value``; a
  conditional expression takes its branch wherever it stands,
  ``isinstance(x, int)`` is answered as Python answers it, ``x in _TABLE``
  reads a module-level table literal's keys, and an ``assert`` those values
  make true does nothing and is left out. An input the port lacks that
  upstream requires (no default, so no value) and that the code only asks
  whether it is ``None`` is decided case by case: the two sides must agree
  both when it is ``None`` and when it is not (at most three such inputs). A
  keyword argument of a call or launch of a function of the same file is
  left out when, with the values that call passes (those literals and the
  lacked values) and the callee's defaults, the callee never reads that
  parameter (a dummy pointer passed for an output only a lacked flag
  writes), whatever that argument is; the callee may be one the file imports
  from another module of the upstream that the commit also changes (read on
  the same side; a module the commit leaves alone is not read, and the
  argument stays); a flag
  passed as ``0`` or ``False`` (``1`` or ``True``) that the callee reads
  only where that value decides a branch, deciding each as the truth value
  would, is that truth value (``RETURN_Z=0`` → ``RETURN_Z=False`` above ``if
  RETURN_Z:``); a store to a local whose value calls
  nothing (once its conditional expression takes its branch) and that
  nothing left reads is then left out too, counting only the stores in
  branches the values keep.

* ``launched-value`` (Python): a kernel the port anchors with names of its
  own often takes, besides the inputs the port binds by position (as at the
  range's base; a run of neighbouring parameters renamed in place together
  is followed to the new names), a mode with no default of its own: its value
  comes from the kernel's launch. When the file launches the kernel once, the
  argument there is a constant, or a parameter of the launching definition
  followed to where it enters: the default of the ported definition that
  calls it once and lacks it (``lacked_through_caller``), or the launching
  definition's own default where the port anchors it; a rebinding on the way
  is followed when it is the only one and reads a module-level table literal
  by that key (``mode = _str_to_mode[mode]``, the table bound once and never
  written through) or binds a constant, in straight-line code or in ``if``
  statements that tests of that value alone decide (``if not isinstance(mode,
  int):``). Two sides equal once the branches those values decide are
  replaced by the branch taken changed only paths the port does not have.
  A second launch, a key computed at run time, any other rebinding, a port
  whose entry point takes the mode, a feature of the file the tree declares
  not carried, or a launch in another file the commit changes that passes
  anything but an equal constant leaves the value unknown (the branches are
  kept); files the commit leaves alone are not read.

* ``absent-platform`` (Python): a GPU platform the code of the port's tree
  never names (``hip``/``rocm``/``amd`` and AMD's architecture families
  ``cdna``, ``rdna``, ``gfx<target>``; ``xpu``/``intel``, ``pvc``, ``xe``;
  ``npu``, ``mps``, ``musa``: no
  identifier or string of any indexed tree file holds the word; comments and
  docstrings are prose and decide nothing) is one a re-implementation does
  not run on, so a test for it is false there: ``torch.version.hip``
  (``None``; ``... is not None`` is false, ``... is None`` true), an
  attribute chain through the platform's module (``torch.xpu.is_available()``),
  and a call without arguments of a helper named for it (``is_hip()``,
  ``is_npu_available()``) or of a function of the same file that only
  returns such a test (``def _amd(): return torch.version.hip is not None``),
  a helper reached through a module by its availability name
  (``utils.is_npu_available()``), and a device or backend name compared with
  a platform's (``infer_device() == "npu"``, ``device in ("xpu", "npu")``; a
  name compared with ``"cuda"`` is true when the tree names no platform whose
  tensors carry a device name of their own: ``hip`` builds call theirs
  ``cuda`` too, and ``"cpu"`` decides nothing). Two sides equal once each ``if`` and conditional
  expression such tests decide (through ``not``, ``and``, ``or``) is replaced
  by the branch taken, and an operand they decide that leaves an ``and``/``or``
  to the other (``cond and not is_npu()`` is ``cond``) is dropped, differ only
  in code for a backend the port does not run. The same holds for a module's
  program outside its definitions: a binding or import chosen by such a test
  (``MAX = 16384 if infer_device() == "npu" else 65536``) keeps the value it
  had on the port's platforms, so no ported definition reading it changed;
  there each import is compared as the names it binds (neighbouring imports
  in any order), and one that only such tests read is left out. A tree whose code names the platform anywhere may run on it, and a
  port pinned to an upstream commit is a copy of upstream's code, which runs
  where upstream runs: the rule decides for neither.

* ``declared-flag-off`` (C/C++): a parameter or template parameter the tree
  declares not carried (``[PARAM]``) is off, so each boolean expression it
  decides is read as its value (``OFF && x`` is ``false``, ``OFF || x`` is
  ``x``, ``!OFF`` is ``true``). Two sides equal once folded so differ only
  in what the port does not carry.

* ``declared-branch-off`` (C/C++): a parameter the tree declares not carried
  is absent for the port, false and a null pointer in a null test; the
  ``if``/``?:`` it decides is its branch taken, a local declared once from
  such a condition is its value, and what then only writes a local nothing
  live reads is left out. Two sides equal so (modulo a consistent renaming,
  ``const`` aside) differ only in what the port does not carry.

  An ``if constexpr`` with no ``else`` whose test is ``std::is_same<T,
  X>::value`` (or ``std::is_same_v<T, X>``) for a template type ``T`` that
  types only declared parameters, and whose branch reads a member of one of
  them (``p.limit``), is the path of a parameter with members, which the
  port does not carry: not taken. A branch that reads nothing of it (the
  port may be the type the test names) decides nothing.

* ``not-carried-reader`` (Python): a statement that only stores a value on
  the definition's first parameter (``ctx.eps = eps`` in an autograd
  ``forward``) feeds only the definitions that read that attribute; when
  every one of them is declared not carried (the ``backward`` of an
  inference-only port), or none reads it, the store is part of what the port
  does not carry, and adding or removing it changes nothing the port runs;
  so does a defaulted parameter upstream adds only to be stored there.

* ``live-branch`` (C/C++, a port in another language): a preprocessor
  conditional with one ``#else`` where exactly one branch only reports or
  traps (calls of ``printf``, ``assert``, ``abort``, ``__trap``, ``#error``,
  or a macro of the file whose every definition is such a call) is what a
  build with nothing to run compiles, an unsupported architecture or
  configuration; the other branch is live. A port in another language never
  makes that build, whatever the condition says, so two sides equal once each
  such conditional is replaced by its live branch differ only in what that
  build compiles, and the reason names the branch taken and why. A branch
  that also does work is never set aside; a copy in upstream's language is
  built for that configuration too, and compared whole; a parse error inside
  the set-aside branch (a reporting macro used without its ``;``) is not
  read for such a port.

Example diffs (NOT_APPLICABLE/not-carried)::

    -    aux_ptr += row             # the port has neither aux_ptr nor RETURN_AUX
    +    if RETURN_AUX == _TRUE:
    +        aux_ptr += row

    -    x = exp2f(x * scale - max_scaled);
    +#ifdef EXACT_MUL
    +    x = exp2f(__fmul_rn(x, scale) - max_scaled);
    +#else
    +    x = exp2f(x * scale - max_scaled);
    +#endif

    -    run(params);                         (a Triton port of the kernel)
    +#if defined(ARCH_SUPPORTS_FAST_PATH)
    +    run(params);
    +#else
    +    UNSUPPORTED_ARCH                    (#define UNSUPPORTED_ARCH printf("needs sm80"))
    +#endif

This module states the rules and holds the comparisons they make on syntax
trees; the comparisons read no git, no tree index and no verdict table, and
no rule names a corpus symbol, path or commit.

The code: ``BranchRules`` holds the methods of the verdict table
(``portq.classifier.verdicts.SymbolClassifier``, which is built from it) that
apply these rules. It reads the in-tree index and the upstream side through the
table it is part of; it must not import the verdict table or anything after it,
and a rule never names a corpus symbol, path or commit.
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
from collections import Counter
from dataclasses import replace
from functools import lru_cache

from portq.classifier.imports import import_bindings, reexport_target, relative_module_path
from portq.classifier.reading import _if_bodies, assignment_targets
from portq.classifier.rules import Rule
from portq.classifier.rules.cosmetic import _cpp_parameter_identifier, cpp_parameter_declarations, local_names
from portq.classifier.rules.scope import _scope_names
from portq.core.evidence import Evidence, Kind
from portq.core.model import TouchedSymbol
from portq.language.signatures import Signature, comment_free_tokens, normalise_name
from portq.language.symbols import KIND_FUNCTION, KIND_METHOD, KIND_TRITON_KERNEL, language_for_path, macro_definitions

RULES = (
    Rule("default-build", ("NOT_APPLICABLE",),
         "A C/C++ definition whose tokens are the same before and after once every preprocessor conditional on a "
         "macro no source of the file defines is replaced by the branch the default build compiles (`#ifdef FLAG` "
         "off, `#ifndef FLAG` on) changed only code that build drops: not-carried. A macro a header the file "
         "includes defines (followed through the headers that one includes) is set by the build as surely as one "
         "the file defines, and keeps its conditional whole.",
         "-    x = f(x);\n+#ifdef EXACT_MUL\n+    x = g(x);\n+#else\n+    x = f(x);\n+#endif",
         "classifier.rules.branches.same_in_default_build, classifier.rules.form.FormRules._form_only"),
    Rule("default-build-lines", ("NOT_APPLICABLE",),
         "A C/C++ file's lines outside definitions whose whole file has the same tokens before and after once "
         "every preprocessor conditional on a macro no source of the file defines and no file of the port's tree "
         "names outside a preprocessor test (no `#define`, no `-D`, no build setting) is replaced by the branch "
         "the default build compiles, and `#include` lines (which name files, `cosmetic-includes`) are left "
         "out: what the port's build compiles of the file is unchanged, and only the other build's branch "
         "moved or changed: cosmetic. A definition that changes too, a default-build value that changes, or a "
         "macro the tree sets stays with `toplevel-use`. Its limit: a macro the build defines from outside the "
         "tree (an extension builder may pass one for another GPU vendor) is read as off; a port built that way "
         "names the macro in a build setting of its tree, and the rule then leaves the file flagged.",
         "-#define NUM_WARPS 32\n+#if defined(USE_GPU_B)\n+#define NUM_WARPS (1024 / warp_size)\n+#else\n"
         "+#define NUM_WARPS 32\n+#endif",
         "classifier.rules.branches.same_file_in_default_build, "
         "classifier.rules.attribution.AttributionRules._default_build_lines"),
    Rule("default-build-launch", ("NEEDS_REVIEW",),
         "A C/C++ launch inside a preprocessor branch the default build does not compile (the conditional on a "
         "macro no source of the file defines, no file of the port's tree sets and the port's own file never "
         "names, read as `default-build` reads it) is not a launch of the build the port mirrors: the launch comparison leaves it out on both "
         "sides, so a kernel launched only for the other build is no `launch-kernel` gap, and what else changed "
         "is compared as usual. A new kernel launched on a path every build compiles, or under a macro the tree "
         "sets, stays a gap.",
         "     else if (blocksize == 64) {\n+#if USE_GPU_B\n+        small_k<<<(blocks + 1) / 2, 64>>>(x, y, n);\n"
         "+#else\n         k<64><<<blocks, 32>>>(x, y, n);\n+#endif",
         "classifier.rules.branches.other_build_lines, classifier.rules.branches.BranchRules._default_build_launches"),
    Rule("lacked-branch", ("NOT_APPLICABLE",),
         "A Python definition whose tokens are the same before and after once each parameter the port lacks takes "
         "upstream's default (a declared not-carried one is off), the branches those values decide are replaced by "
         "the branch taken, and those parameters, the statements (and call-free `if`s) that only write them, and "
         "arguments passing a declared one are left out, changed only paths the port does not have: not-carried. "
         "Applies when the port's parameters are all upstream's by name; in a helper the anchored definition calls "
         "(an extracted body), a parameter it passes straight from one the port lacks takes that one's default, "
         "and a port with its own names binds the anchored definition's leading parameters by position, as they "
         "were at the scanned range's base, when every later one has a default there; an argument the called kernel never reads for those values, and a "
         "call-free store to a local nothing then reads, are left out. Conditional expressions take their "
         "branch, `isinstance` and `x in TABLE` are decided, asserts that hold are left out, a required input the "
         "port lacks that is only tested against None must give equal sides both ways, the called kernel may be "
         "imported from a module the commit changes, and a flag the kernel only tests is its truth value. A "
         "method's receiver (`self`, `cls`, `ctx`) the port's definition has too is never a parameter it lacks, and a "
         "write to a lacked (not declared) name that the kept code still reads (a value forced and passed on to a "
         "launch) is kept, not left out.",
         "-    aux_ptr += row\n+    if RETURN_AUX == _TRUE:\n+        aux_ptr += row",
         "classifier.rules.branches.same_for_port_parameters, classifier.rules.branches.BranchRules._lacked_branches"),
    Rule("port-lacks-dropped-decorator", ("NOT_APPLICABLE",),
         "When `lacked-branch` compares a Python definition, decorators upstream drops (the new decorators are "
         "the old ones in order, less those) whose names the port carries no decorator of are set aside on the "
         "old side: the dropped line leaves upstream in the form the port already has. A decorator added or "
         "changed, or one the port carries, is compared.",
         "-@torch.compiler.disable\n def fast_path(x, smooth=True):   (the port: no decorator; smooth declared)\n"
         "     if smooth:\n-        x = x - x.mean()\n+        x = x - x.mean(dim=-1, keepdim=True)",
         "classifier.rules.branches.dropped_decorators, classifier.rules.branches.BranchRules._lacked_branches"),
    Rule("launched-value", ("NOT_APPLICABLE",),
         "A Python definition the port anchors with names of its own (bound by position as at the range's base) "
         "whose parameters the port lacks have no default takes, for each, the value its one launch in the file "
         "passes: a constant, or the launching definition's parameter followed to where it enters (the default "
         "of a ported definition that calls it once and lacks it, then a module-level table literal read by that "
         "key, `mode = _str_to_mode[mode]`, in an `if` decided by that value); the same tokens before and after "
         "once the branches those values decide are replaced by the branch taken: not-carried. A kernel its own "
         "module never launches takes the one launch in the other upstream modules the tree anchors definitions "
         "of (importing it at module level or in the launching function; a `with` block runs once, a loop or "
         "`try` is not followed); where the port's names bind nothing by position, a parameter upstream added "
         "since the range's base under a name the port does not use is one it lacks (the port is taken as in "
         "sync at the base). A caller-required or computed value keeps the branch.",
         "+    if mode == _MODE_NONE:      (the ported entry point's mode=\"fp32\" reaches the one launch as\n"
         "+        eps = eps.to(x.dtype)    _str_to_mode[\"fp32\"], _MODE_FP32.value)",
         "classifier.rules.branches.value_at_launch, classifier.rules.branches.module_tables, "
         "classifier.rules.branches.bound_since_base, classifier.rules.branches.BranchRules._anchored_launch, "
         "classifier.rules.branches.BranchRules._launched_values"),
    Rule("absent-platform", ("NOT_APPLICABLE",),
         "A Python definition, or a module's program outside its definitions, whose tokens are the same before "
         "and after once each test for a GPU platform the "
         "port's tree never names (its vendor's architecture families included: `is_cdna()`, `is_gfx942()` test "
         "`hip`) (`torch.version.hip`, `torch.xpu.is_available()`, a helper `is_hip()` or "
         "`m.is_npu_available()`, one of "
         "the file that only returns such a test, a device name compared with the platform's, "
         "`infer_device() == \"npu\"`, or with `\"cuda\"` where no platform with a device name of its own is "
         "named) is read "
         "as false and the `if`s, conditional expressions and `and`/`or` operands it decides are replaced by the "
         "branch taken (and imports only such tests read dropped) changed "
         "only code for a backend the port does not run: not-carried. A module-level binding or import so "
         "chosen keeps the port's value, so the ported definitions reading it are unchanged.",
         "-    num_warps = 32\n+    num_warps = 32 if not is_hip() else 16   (no tree file names hip or rocm)",
         "classifier.rules.branches.same_off_platforms, classifier.rules.branches.BranchRules._absent_platforms, "
         "classifier.rules.branches.same_module_off_platforms, "
         "classifier.rules.branches.BranchRules._module_absent_platforms, "
         "classifier.rules.attribution.AttributionRules._module_platform_choice"),
    Rule("declared-flag-off", ("NOT_APPLICABLE",),
         "A C/C++ definition whose tokens are the same before and after once each parameter or template parameter "
         "the tree declares not carried is read as false and the boolean expressions it decides are folded "
         "(`OFF && x` → false, `OFF || x` → x, `!OFF` → true) changed only what the port does not carry: "
         "not-carried.",
         "-    auto k = &kernel<Is_dropout>;\n+    auto k = &kernel<Is_dropout && !Is_softcap>;   (Is_dropout declared)",
         "classifier.rules.branches.same_with_flags_off, classifier.verdicts.SymbolClassifier._against_port"),
    Rule("live-branch", ("NOT_APPLICABLE",),
         "A C/C++ definition whose tokens are the same before and after once each preprocessor conditional with "
         "one `#else`, where exactly one branch only reports or traps (`printf`, `assert`, `__trap`, `#error`, a "
         "macro of the file defined as such), is replaced by its other, live, branch changed only what a build "
         "with nothing to run compiles; a port in another language never makes that build: not-carried, saying "
         "which branch was taken. A parse error inside the set-aside branch is not read for such a port.",
         "-    run(p);\n+#if defined(ARCH_OK)\n+    run(p);\n+#else\n+    UNSUPPORTED_ARCH\n+#endif   "
         "(`#define UNSUPPORTED_ARCH printf(\"needs sm80\")`)",
         "classifier.rules.branches.same_on_live_branch, classifier.rules.form.FormRules._form_only, "
         "classifier.rules.provenance.ProvenanceRules._outside_reporting_branches"),
    Rule("refused-architecture", ("NOT_APPLICABLE",),
         "A C/C++ definition that, before the change, refused a GPU architecture (an `if` arm testing for it alone "
         "that only reports or traps: `LIB_CHECK(false, ...)`, `throw`, `abort()`; or an unconditional check of its "
         "body demanding other architectures, `LIB_CHECK(is_sm90, ...)`) never ran there, so a port in sync with it "
         "has no path on that architecture. An architecture test is a call without arguments of a function named "
         "`is_smNN` (`arch.is_sm100()`), a compute capability's `major` compared for equality with a number "
         "(`props->major == 10` is sm100), or a local declared once, never assigned, from one. Two sides whose "
         "tokens are the same once every test for a refused architecture is read as false (an `if` so decided is "
         "its `else`, `a || T` is `a`, `a && T` false, a local declared from it left out) and check messages "
         "erased changed only support for that architecture: not-carried. A change in an arm of an architecture "
         "the old side ran, an arm that did work before, or a check now letting other architectures through "
         "stays flagged.",
         "     } else if (arch.is_sm100()) {\n-        LIB_CHECK(false, \"unsupported\");\n"
         "+        splits = sms / (2 * heads);",
         "classifier.rules.branches.refused_architectures, classifier.rules.branches.refused_arch_expander, "
         "classifier.verdicts.SymbolClassifier._refused_architectures"),
    Rule("not-carried-reader", ("NOT_APPLICABLE",),
         "A Python definition whose tokens are the same before and after once the statements that only store a "
         "value on its first parameter (`ctx.NAME = value`) are left out, where every other definition of the file "
         "that reads `NAME` is declared not carried (or none reads it) and the definition itself never reads it, "
         "changed only what feeds code the port does not carry: not-carried.",
         "-        ctx.eps = eps   (only the not-carried backward reads ctx.eps)",
         "classifier.rules.branches.stored_attributes, classifier.rules.branches.BranchRules._stores_for_not_carried"),
    Rule("declared-branch-off", ("NOT_APPLICABLE",),
         "A C/C++ parameter the tree declares not carried is absent for the port: false, and a null pointer in a "
         "null test (`p != nullptr` false, `p == nullptr` true). A definition the same before and after once each "
         "side is read so (a local declared once from a condition that decides, `const bool has_p = (p != "
         "nullptr);`, is that value; an `if`, `if constexpr` or `?:` whose condition it decides is its branch "
         "taken; a statement that then only writes a local nothing live reads, pure math on the right, or only "
         "assumes a fact about one, is left out), and its parameters and locals renamed consistently by "
         "position, const aside, changed only what the port does not carry: not-carried. An `if constexpr` with "
         "no `else` testing `std::is_same<T, X>::value` (or `std::is_same_v<T, X>`) for a template type `T` that "
         "types only declared parameters, whose branch reads a member of one of them, is that parameter's path "
         "and not taken. Without the declaration, with a type-keyed branch that reads nothing of the parameter, "
         "or with a change on the path the port runs, it is compared as before.",
         "-    if constexpr (kScaled) { m = fmaxf(fabsf(v), m); v = v * s; }\n"
         "+    if (has_peak) { m = fmaxf(fabsf(v), m); }\n+    if constexpr (kScaled) { v = v * s; }   "
         "(`peak` declared not carried; `has_peak = (peak != nullptr)`)",
         "classifier.rules.branches.declared_off_expander, "
         "classifier.verdicts.SymbolClassifier._declared_branches_off"),
    Rule("declared-count-off", ("NOT_APPLICABLE",),
         "When `declared-branch-off` reads a C/C++ parameter the tree declares not carried as absent, a count "
         "so read is none (0) or one (nothing to split, the value the port's missing feature takes): compared "
         "with a non-negative integer literal it is decided where both readings agree (`n > 1` false, "
         "`n <= 1` true; `n > 0` stays undecided). Once the branches so decided are replaced by the branch taken, "
         "a block (`{ … }`) that is a whole branch taken is read as its statements when no name declared "
         "directly in it is named anywhere outside it, and a local declared with no value (`int at;`) whose "
         "first live mention is a plain store `at = value;` (the value not naming it) in the same block, or "
         "in a block so laid into it, is read as declared with that value at the store. The same tokens "
         "before and after then: not-carried. A comparison the two readings disagree on, a local read "
         "before its store, or a change on the path taken stays flagged.",
         "-    int at;\n-    if (n_parts > 1) { at = pos + part * len / 2; }\n"
         "-    else { int base = s[b]; at = pos + base; }\n+    int base = s[b];\n+    int at = pos + base;\n"
         "+    if (n_parts > 1) { at += part * len / 2; }   (n_parts, part declared not carried)",
         "classifier.rules.branches._off_count, classifier.rules.branches._flattened_blocks, "
         "classifier.rules.branches._merged_declarations, classifier.verdicts.SymbolClassifier._declared_counts"),
    Rule("declared-stores", ("NOT_APPLICABLE",),
         "A C/C++ definition whose sides, each read as `declared-branch-off` reads it (something decided), still "
         "differ is compared block by block: statements that match token for token are kept, an `if` or loop "
         "whose head matches is compared inside, and each remaining run of straight-line statements "
         "(declarations, plain and compound stores to names, elements or members, `if`/`else`, nested blocks; "
         "pure math only) is evaluated symbolically (a branch's stores merged as `cond ? a : b`, a store to a "
         "typed local converted to its type unless the value has it already). Every place a run writes, less "
         "the locals it declares and the rest never names, holding the same value on both sides: the change "
         "only reorganised the path the port runs: not-carried. Elements of two places are taken to be "
         "distinct only where one is a local array no pointer names (each mention indexed, never under `&`, or "
         "passed to a call whose result is dropped); a reference local evaluates nothing. A loop, a call with "
         "effects, an array written under two spellings, a store through one pointer beside a store or load "
         "through another, an index the run writes, a local read before its store, or a different value "
         "stays flagged.",
         "-    if (m) { v = a + b; } else { if (OFF && k > t) { v = NEG; } else { v = a; } }\n"
         "+    float t; if (OFF && k > t) { t = NEG; } else { t = a; if (m) { t += b; } }\n+    v = t;   "
         "(OFF declared not carried)",
         "classifier.rules.branches.same_stores, classifier.verdicts.SymbolClassifier._declared_stores"),
    Rule("lacked-member", ("NOT_APPLICABLE",),
         "A member of a parameters struct (`params.m`, `params->m`) that a C/C++ definition ported in another "
         "language reads on both sides of a commit, that the definition did not read at the scanned range's base "
         "and that no file of the port's tree names (normalised) is an input the port lacks, the port being taken "
         "as in sync at the base: it is absent, a null pointer in a null test (`params.m == nullptr` true), as "
         "`declared-branch-off` reads a declared parameter. A local declared once, never assigned, as an `int`-wide "
         "type from a grid or thread index (`blockIdx.x`), or from a conditional expression so decided whose "
         "branch taken is such a local or `0`, is non-negative: `i < 0` is false, `i >= 0` true. The branches so "
         "decided replaced by the branch taken, a definition whose tokens are then the same before and after, or "
         "that stores the same values (`declared-stores`), or whose only difference is the order of declarations "
         "of one local each, with values that store nothing and call only casts and pure math, none moved across "
         "one it reads or that reads it, changed only the path the port lacks: not-carried. A member the "
         "definition already read at the base, one the tree names, a copy in upstream's language (behind, not "
         "without the path), a comparison a non-negative index does not decide, or a change on the path taken "
         "stays flagged.",
         "-    const int row_in = params.idx_ptr == nullptr ? row : params.idx_ptr[row];\n"
         "+    const int row_in = params.idx_ptr == nullptr ? row : params.idx_ptr[row];\n"
         "+    if (row_in < 0) { out[0] = T(0.f); return; }   (idx_ptr added since the base; row = blockIdx.x)",
         "classifier.rules.branches.struct_members, classifier.rules.branches.declared_off_expander, "
         "classifier.rules.branches.same_reordered_declarations, "
         "classifier.verdicts.SymbolClassifier._lacked_member_reading"),
    Rule("lacked-branch-nested", ("NOT_APPLICABLE",),
         "A Python definition nested in a ported one (a grid function defined inside the host), changed by a "
         "commit that also changes the enclosing definition, where the enclosing definition is the same before and "
         "after for the port (`lacked-branch`): the nested definition's change lies in paths the port lacks, since "
         "its text is part of the enclosing definition's tokens. NOT_APPLICABLE/not-carried. Without a change to "
         "the enclosing definition, or where it is not the same for the port, the nested one is decided as before.",
         "+    if use_tma:\n+        def tma_grid(META):\n+            ...  (in the ported host; the port lacks use_tma)",
         "classifier.rules.branches.BranchRules._nested_in_lacked_branch"),
    Rule("lacked-branch-launch", ("NEEDS_REVIEW",),
         "A Python launch inside an `if`/`elif` branch the port never takes (its condition, with each parameter the "
         "port lacks at upstream's default and a declared not-carried one off, decided against the branch, or a "
         "clause after one decided for another) is not a launch the port mirrors: the launch comparison leaves it "
         "out on both sides, as `default-build-launch` does for a build the port does not make, and what else "
         "changed is compared as usual. A launch on a path the port's values take, or under a condition they do "
         "not decide (a parameter the port has, a name the definition assigns), stays compared.",
         "     if use_tma:\n-        _tma_kernel[grid](a, b, c)\n+        _tma_kernel[grid](a, b, c, c_dtype)  "
         "(the port lacks use_tma, default False)",
         "classifier.rules.branches.untaken_branch_spans, classifier.rules.branches.BranchRules._lacked_branch_launches"),
    Rule("new-option", ("REAL_GAP", "INERT", "NEEDS_REVIEW"),
         "A parameter with a default that the commit itself adds to a ported Python host (a function or method "
         "callers call, not a kernel a launch passes constexprs to), which the port "
         "lacks and does not declare not-carried, is an input upstream's callers can now pass (selecting a new "
         "path) that the port cannot accept: an interface change. `lacked-branch` does not fold it to its default, "
         "and the parameter rules judge the definition (`parameter-change`). A parameter that existed before the "
         "commit (at the range's base, or added by an earlier commit the port did not follow) still takes its "
         "default, so a later change confined to the branch it selects stays not-carried.",
         "-def scale(x, out, exact=False):\n+def scale(x, out, use_tma=False, exact=False):\n"
         "+    if use_tma:\n+        _tma_kernel[grid](x, out)  (the port has no use_tma)",
         "classifier.rules.branches.new_options, classifier.rules.branches.BranchRules._lacked_branches"),
)

_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)


_PREDEFINED = re.compile(r"^(?:__|_[A-Z])|^NDEBUG$")
"""Names a compiler, platform or build system sets without any source defining them (``__CUDA_ARCH__``,
``_WIN32``, ``NDEBUG``): never assumed off."""


def defined_macros(*sources: bytes | None) -> set[str]:
    """Every macro name a ``#define`` of ``sources`` names (on or off, in any branch)."""
    return {m.group(1).decode() for source in sources if source for m in _DEFINE.finditer(source)}


_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.MULTILINE)


def included_macros(source: bytes | None, path: str, read, limit: int = 64) -> set[str]:
    """Every macro name a ``#define`` names in the headers ``source`` (the file at ``path``) includes, followed
    through the headers they include: a macro such a header defines (a platform switch set from the
    compiler's own macros) is set by the file's build as surely as one the file defines. ``read(path)`` gives
    an upstream file's bytes or None; an include is looked for beside the including file and then in each
    folder above it up to the root (where a build's include path usually points); one found nowhere (a system
    header) defines nothing here. At most ``limit`` headers are read."""
    found: set[str] = set()
    seen: set[str] = {path}
    missing: set[str] = set()
    queue = [(path, source)]
    while queue:
        current, text = queue.pop(0)
        if not text:
            continue
        folders = current.split("/")[:-1]
        for match in _INCLUDE.finditer(text):
            name = match.group(1).decode("utf-8", errors="replace").strip()
            for depth in range(len(folders), -1, -1):
                candidate = "/".join([*folders[:depth], name])
                parts: list[str] = []
                for part in candidate.split("/"):
                    if part == "..":
                        if parts:
                            parts.pop()
                    elif part not in ("", "."):
                        parts.append(part)
                candidate = "/".join(parts)
                if candidate in seen:
                    break
                if candidate in missing:
                    continue
                if len(seen) >= limit:
                    return found
                header = read(candidate)
                if header is None:
                    missing.add(candidate)
                    continue
                seen.add(candidate)
                found |= defined_macros(header)
                queue.append((candidate, header))
                break
    return found


def undecided_macro(name: str, defined: set[str]) -> bool:
    """True for a macro whose value the default build does not settle: defined by a source, or predefined."""
    return name in defined or bool(_PREDEFINED.search(name))


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def _three_valued(node, leaf) -> bool | None:
    """The value of a C/C++ condition built from ``!``, ``&&``, ``||`` and
    parentheses over leaves ``leaf`` evaluates (True, False, or None when
    unknown); None for anything else. An unknown operand decides nothing
    unless the other operand settles the operator on its own."""
    if node is None:
        return None
    kind = node.type
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return _three_valued(node.named_children[0], leaf)
    if kind == "unary_expression" and _text(node.child_by_field_name("operator") or node.children[0]) == "!":
        inner = _three_valued(node.child_by_field_name("argument"), leaf)
        return None if inner is None else not inner
    if kind == "binary_expression":
        operator = _text(node.child_by_field_name("operator"))
        left = _three_valued(node.child_by_field_name("left"), leaf)
        right = _three_valued(node.child_by_field_name("right"), leaf)
        if operator == "&&":
            return False if left is False or right is False else (True if left and right else None)
        if operator == "||":
            return True if left is True or right is True else (False if left is False and right is False else None)
        return None
    return leaf(node)


def default_build_value(node, defined: set[str]) -> bool | None:
    """The value of an ``#if`` condition in the default build, or None when
    it reads a macro the file defines or anything the rule cannot evaluate."""

    def leaf(node) -> bool | None:
        kind = node.type
        if kind == "preproc_defined":
            names = [c for c in node.named_children if c.type == "identifier"]
            return None if len(names) != 1 or undecided_macro(_text(names[0]), defined) else False
        if kind == "identifier":
            return None if undecided_macro(_text(node), defined) else False
        if kind == "number_literal" and _text(node) in ("0", "1"):
            return _text(node) == "1"
        return None

    return _three_valued(node, leaf)


def _branch(node, skip) -> list:
    """The children of a conditional or ``#else``/``#elif`` node that form its body."""
    return [c for c in node.children if c not in skip and c.type not in ("#endif", "#else", "\n")
            and not c.type.startswith("#")]


def default_branch(node, defined: set[str]) -> list | None:
    """What the default build compiles of a conditional node, or None when it cannot be decided."""
    kind = node.type
    alternative = node.child_by_field_name("alternative")
    if kind in ("preproc_ifdef", "preproc_elifdef"):
        name = node.child_by_field_name("name")
        if name is None or undecided_macro(_text(name), defined):
            return None
        negated = node.children[0].type in ("#ifndef", "#elifndef")
        taken = negated
    elif kind in ("preproc_if", "preproc_elif"):
        name = node.child_by_field_name("condition")
        taken = default_build_value(name, defined)
        if taken is None:
            return None
    else:
        return None
    if taken:
        return _branch(node, {name, alternative})
    if alternative is None:
        return []
    if alternative.type == "preproc_else":
        return _branch(alternative, set())
    return default_branch(alternative, defined)


def decided_macros(node, defined: set[str]) -> set[str]:
    """The macro names of the conditionals in ``node`` the default build decides."""
    names: set[str] = set()
    for current in _walk(node):
        if current.type in ("preproc_ifdef", "preproc_if", "preproc_elif", "preproc_elifdef") \
                and default_branch(current, defined) is not None:
            head = current.child_by_field_name("name") or current.child_by_field_name("condition")
            names |= {_text(n) for n in _walk(head) if n.type == "identifier"}
    return names


def default_build_tokens(node, defined: set[str]) -> list[str]:
    """A C/C++ definition's tokens with each conditional the rule can decide
    replaced by the branch the default build compiles (see the module)."""
    def expand(current):
        if current.type in ("preproc_ifdef", "preproc_if"):
            return default_branch(current, defined)
        return None
    return comment_free_tokens(node, expand=expand)


def same_in_default_build(before, after, defined: set[str]) -> bool:
    """True when two C/C++ definition nodes differ, and differ only in code
    the default build does not compile (see the module)."""
    if before is None or after is None or before.has_error or after.has_error:
        return False
    if comment_free_tokens(before) == comment_free_tokens(after):
        return False
    return default_build_tokens(before, defined) == default_build_tokens(after, defined)


def same_file_in_default_build(before, after, defined: set[str]) -> set[str] | None:
    """The macros whose conditionals the default build decides, when two C/C++ file roots differ only
    in code that build does not compile and in ``#include`` lines (``default-build-lines``); else None."""
    if before is None or after is None or before.has_error or after.has_error:
        return None

    def expand(current):
        if current.type == "preproc_include":
            return []
        if current.type in ("preproc_ifdef", "preproc_if"):
            return default_branch(current, defined)
        return None
    if comment_free_tokens(before, expand=expand) != comment_free_tokens(after, expand=expand):
        return None
    return decided_macros(before, defined) | decided_macros(after, defined)


def other_build_lines(root, defined: set[str]) -> dict[int, set[str]]:
    """The 1-based lines of a C/C++ file that sit in a branch of a preprocessor conditional the default
    build decides and does not compile (``default-build-launch``), each with the macros the conditionals
    that drop it test. Lines of the conditional's directives count as dropped; lines of the branch taken
    do not."""
    dropped: dict[int, set[str]] = {}
    if root is None:
        return dropped
    for current in _walk(root):
        if current.type not in ("preproc_ifdef", "preproc_if"):
            continue
        taken = default_branch(current, defined)
        if taken is None:
            continue
        head = current.child_by_field_name("name") or current.child_by_field_name("condition")
        names = {_text(n) for n in _walk(head) if n.type == "identifier"}
        span = set(range(current.start_point[0] + 1, current.end_point[0] + 2))
        for child in taken:
            span -= set(range(child.start_point[0] + 1, child.end_point[0] + 2))
        for line in span:
            dropped.setdefault(line, set()).update(names)
    return dropped


# a conditional's test with each continued line (ending in a backslash) it runs on to
_PREPROCESSOR_TEST = re.compile(rb"^[ \t]*#[ \t]*(?:if|ifdef|ifndef|elif|elifdef|elifndef)\b(?:[^\n]*\\\r?\n)*[^\n]*$",
                                re.MULTILINE)


def set_in_tree(names: set[str], sources: dict[str, bytes] | None) -> bool:
    """True when a file of the port's tree names one of ``names`` outside a preprocessor test, a test's
    continued lines included (a ``#define``, a ``-DNAME`` flag, a build setting), or when the tree
    cannot be read: such a macro may be on in the port's build."""
    if sources is None:
        return True
    for source in sources.values():
        rest = _PREPROCESSOR_TEST.sub(b"", source)
        if any(re.search(rb"(?:\b|(?<=-D))" + re.escape(name.encode()) + rb"\b", rest) for name in names):
            return True
    return False


# --- Python: parameters the port lacks ----------------------------------------------

_OFF = object()
"""The value of a parameter the port lacks that has no default: its path is not carried."""

_RECEIVERS = ("self", "cls", "ctx")
"""The names a method's first parameter binds to the object it runs on: a port whose definition has one
reads the same object, so it never lacks it (``lacked-branch``)."""


def _literal(node):
    """The value of a literal Python expression node (``True``, ``0``, ``None``, ``tl.constexpr(1)``), else
    ``...`` (not known)."""
    if node is None:
        return ...
    kind = node.type
    if kind == "true":
        return True
    if kind in ("false", "none"):
        return False if kind == "false" else None
    if kind == "integer":
        try:
            return int(_text(node), 0)
        except ValueError:
            return ...
    if kind == "unary_operator" and _text(node.child_by_field_name("operator")) in ("-", "+"):
        operand = _literal(node.child_by_field_name("argument"))
        if isinstance(operand, (int, float)) and not isinstance(operand, bool):
            return -operand if _text(node.child_by_field_name("operator")) == "-" else operand
        return ...
    if kind == "float":
        try:
            return float(_text(node))
        except ValueError:
            return ...
    if kind == "string" and not any(c.type == "interpolation" for c in node.named_children):
        try:
            value = ast.literal_eval(_text(node))
        except (ValueError, SyntaxError):
            return ...
        return value if isinstance(value, str) else ...
    if kind == "call" and _text(node.child_by_field_name("function")).split(".")[-1] == "constexpr":
        arguments = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
        return _literal(arguments[0]) if len(arguments) == 1 else ...
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return _literal(node.named_children[0])
    return ...


def _constant(node, constants: dict[str, object]):
    """The value of a literal, a module constant (``_ON``) or a constexpr constant's ``.value``, else ``...``."""
    if node.type == "identifier":
        return constants.get(_text(node), ...)
    if node.type == "attribute" and _text(node.child_by_field_name("attribute")) == "value" \
            and node.child_by_field_name("object").type == "identifier":
        return constants.get(_text(node.child_by_field_name("object")), ...)
    return _literal(node)


def _module_assignments(root):
    """``(name, assignment)`` for each module-level statement of ``root`` that is one assignment to a bare name
    (``FLAG = True``, ``_ON: tl.constexpr = ...``), in source order; nothing when ``root`` is None."""
    for statement in root.named_children if root is not None else ():
        if statement.type != "expression_statement" or statement.named_child_count != 1:
            continue
        assignment = statement.named_children[0]
        left = assignment.child_by_field_name("left") if assignment.type == "assignment" else None
        if left is not None and left.type == "identifier":
            yield _text(left), assignment


def module_constants(root) -> dict[str, object]:
    """Module-level names bound once to a literal (``_ON: tl.constexpr = tl.constexpr(1)``, ``FLAG = True``)."""
    found: dict[str, list] = {}
    for name, assignment in _module_assignments(root):
        found.setdefault(name, []).append(_literal(assignment.child_by_field_name("right")))
    return {name: values[0] for name, values in found.items() if len(values) == 1 and values[0] is not ...}


def _walk(node):
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _function(node):
    return node.child_by_field_name("definition") if node.type == "decorated_definition" else node


def parameter_defaults(node) -> dict[str, object]:
    """A Python definition's parameters, normalised name -> literal default (``...`` when unknown, ``_OFF``
    when there is none)."""
    function = _function(node)
    parameters = function.child_by_field_name("parameters") if function is not None else None
    found: dict[str, object] = {}
    for parameter in parameters.named_children if parameters is not None else ():
        if parameter.type == "identifier":
            found[normalise_name(_text(parameter))] = _OFF
        elif parameter.type == "typed_parameter":
            names = [c for c in parameter.named_children if c.type == "identifier"]
            if names:
                found[normalise_name(_text(names[0]))] = _OFF
        elif parameter.type in ("default_parameter", "typed_default_parameter"):
            name = parameter.child_by_field_name("name")
            if name is not None:
                found[normalise_name(_text(name))] = _literal(parameter.child_by_field_name("value"))
    return found


def _truth(value) -> bool | None:
    if value is ... or value is _NOT_NONE:
        return None
    if value is _OFF:
        return False
    return bool(value)


def branch_taken(statement, taken: bool, decide=None) -> list:
    """What a Python ``if`` statement whose condition is decided runs, as an expansion: its consequence,
    or the first ``else`` / ``elif`` after it (an ``elif`` as an ``if`` of its own), or nothing. With
    ``decide`` (condition node -> True, False or None when not known), the ``elif`` conditions after a false
    one are decided in turn, as the ``if`` statements they stand for would be."""
    if taken:
        return [statement.child_by_field_name("consequence")]
    clauses = [c for c in statement.children if c.type in ("elif_clause", "else_clause")]
    while clauses and clauses[0].type == "elif_clause" and decide is not None:
        chosen = decide(clauses[0].child_by_field_name("condition"))
        if chosen is None:
            break
        if chosen:
            return [clauses[0].child_by_field_name("consequence")]
        clauses = clauses[1:]
    if not clauses:
        return []
    if clauses[0].type == "else_clause":
        return [clauses[0].child_by_field_name("body")]
    return ["if"] + [c for c in clauses[0].children if c.type != "elif"] + clauses[1:]


def port_tokens(node, lacked: dict[str, object], constants: dict[str, object],
                declared: frozenset[str] | set[str] = frozenset(), callees: dict | None = None) -> list[str]:
    """A Python definition's tokens as a port with ``lacked`` (normalised name -> the value it takes) runs it:
    see the module. Arguments passing a ``declared`` (not-carried) name are left out too; one passing a
    parameter the port merely lacks is kept (what it passes on is an input the port may owe).

    With ``callees`` (bare name -> definition node of the same file and side, or ``(node, its module's values)``
    for one imported from another file, ``BranchRules._callees``), a keyword argument (calling
    nothing) of a call or launch of one of them is left out when, with the values the call passes (literals,
    module constants, the lacked values) and the callee's defaults, the callee never reads that parameter
    (``dead_parameters``); a store to a local (its value calling nothing) that nothing left reads is then left
    out too."""
    stores: dict[str, int] = {}
    written: set[str] = set()
    tokens = _port_tokens(node, lacked, constants, declared, callees, frozenset(), stores=stores, written=written)
    # A write to a lacked (not declared) name that the kept code still reads sets what the port's path reads:
    # it is kept, so forcing a value there, or no longer forcing it, is compared.
    kept = frozenset(normalise_name(n) for n in written if normalise_name(n) not in declared and n in tokens)
    if kept:
        stores = {}
        tokens = _port_tokens(node, lacked, constants, declared, callees, frozenset(), stores=stores,
                              kept_writes=kept)
    if not callees:
        return tokens
    parameters = set(parameter_defaults(node))
    dead = {name for name, count in stores.items() if tokens.count(name) == count
            and normalise_name(name) not in parameters and normalise_name(name) not in lacked}
    return _port_tokens(node, lacked, constants, declared, callees, dead, kept_writes=kept) if dead else tokens


def _folded(expression, lacked, constants):
    """``expression``, or the branch a conditional expression takes for the lacked values (repeatedly)."""
    while expression is not None and expression.type == "conditional_expression" \
            and expression.named_child_count == 3 and lacked is not None:
        taken = _truth(_port_value(expression.named_children[1], lacked, constants or {}))
        if taken is None:
            break
        expression = expression.named_children[0 if taken else 2]
    return expression


def _plain_store(statement, lacked=None, constants=None) -> str | None:
    if statement.type != "expression_statement" or statement.named_child_count != 1 \
            or statement.named_children[0].type != "assignment":
        return None
    left = statement.named_children[0].child_by_field_name("left")
    right = _folded(statement.named_children[0].child_by_field_name("right"), lacked, constants)
    if left is None or left.type != "identifier" or right is None or any(n.type == "call" for n in _walk(right)):
        return None
    return _text(left)


_DEAD_PARAMETERS: dict[tuple, frozenset[str]] = {}
"""``dead_parameters`` by (callee text, passed values, constants): the old and new sides of a commit, and
every symbol of it, ask about the same callee with the same values; one answer costs a token walk per
parameter. Bounded: cleared when it reaches ``_DEAD_PARAMETERS_BOUND`` answers."""
_DEAD_PARAMETERS_BOUND = 4096


def dead_parameters(callee, passed: dict[str, object], constants: dict[str, object]) -> set[str]:
    """The parameters (normalised) of ``callee`` its body never reads once each parameter in ``passed``
    (normalised name -> value) and each defaulted one not passed takes its value and the branches those values
    decide are replaced by the branch taken; a statement only writing a parameter is not a read."""
    key = (callee.text, repr(sorted(passed.items(), key=repr)), repr(sorted(constants.items(), key=repr)))
    if key not in _DEAD_PARAMETERS:
        if len(_DEAD_PARAMETERS) >= _DEAD_PARAMETERS_BOUND:
            _DEAD_PARAMETERS.clear()
        _DEAD_PARAMETERS[key] = frozenset(_dead_parameters(callee, passed, constants))
    return set(_DEAD_PARAMETERS[key])


def _spellings(callee) -> dict[str, str]:
    """A definition's parameters: normalised name -> as written."""
    function = _function(callee)
    parameters = function.child_by_field_name("parameters") if function is not None else None
    spelled = {normalise_name(_text(n)): _text(n) for n in (parameters.named_children if parameters else ())
               if n.type == "identifier"}
    spelled.update({normalise_name(_text(n.child_by_field_name("name") or n.named_children[0])):
                    _text(n.child_by_field_name("name") or n.named_children[0])
                    for n in (parameters.named_children if parameters else ()) if n.type != "identifier"
                    and n.named_child_count and (n.child_by_field_name("name") or n.named_children[0]).type
                    == "identifier"})
    return spelled


def _dead_parameters(callee, passed: dict[str, object], constants: dict[str, object]) -> set[str]:
    """``dead_parameters``, computed."""
    defaults = parameter_defaults(callee)
    values = {n: v for n, v in defaults.items() if v is not _OFF and v is not ... and n not in passed}
    values.update(passed)
    spelled = _spellings(callee)
    dead = set()
    for name in (n for n in defaults if n in spelled and (n not in values or n in passed)):
        # a passed value too: what the others decide may leave the parameter unread whatever it is
        others = {n: v for n, v in values.items() if n != name}
        tokens = _port_tokens(callee, others, constants, frozenset(), None, frozenset(), spelled[name])
        if spelled[name] not in tokens:
            dead.add(name)
    return dead


class _Given:
    """The value of an input the port lacks and upstream requires, in the case where it is not ``None``: only
    ``x is None`` / ``x is not None`` are decided by it (``same_for_port_parameters`` tries both cases)."""

    def __repr__(self) -> str:
        return "<not None>"


_NOT_NONE = _Given()

_TYPE_NAMES = {"int": int, "str": str, "float": float, "bool": bool, "dict": dict, "tuple": tuple, "list": list}


def _port_value(expression, lacked: dict[str, object], constants: dict[str, object]):
    """The value an expression takes for a port with ``lacked`` (normalised name -> value) and the module's
    ``constants`` (literals and table literals, ``module_values``), or ``...`` when they do not decide it:
    literals, lacked names, ``not``, comparisons with a constant (``==``, ``!=``, ``is None``, ``in``),
    ``isinstance(x, int)`` as Python answers it, and a conditional expression's taken branch."""
    if expression is None:
        return ...
    kind = expression.type
    if kind == "identifier":
        name = normalise_name(_text(expression))
        return lacked[name] if name in lacked else ...
    if kind == "parenthesized_expression" and expression.named_child_count == 1:
        return _port_value(expression.named_children[0], lacked, constants)
    if kind in ("true", "false", "none", "integer", "float", "string"):
        return _literal(expression)
    if kind == "not_operator":
        inner = _truth(_port_value(expression.child_by_field_name("argument"), lacked, constants))
        return ... if inner is None else not inner
    if kind == "conditional_expression" and expression.named_child_count == 3:
        taken = _truth(_port_value(expression.named_children[1], lacked, constants))
        return ... if taken is None else _port_value(expression.named_children[0 if taken else 2], lacked, constants)
    if kind == "call" and _text(expression.child_by_field_name("function")) == "isinstance":
        arguments = [a for a in expression.child_by_field_name("arguments").named_children if a.type != "comment"]
        if len(arguments) != 2 or _text(arguments[1]) not in _TYPE_NAMES:
            return ...
        mine = _port_value(arguments[0], lacked, constants)
        return ... if mine is ... or mine is _OFF or mine is _NOT_NONE \
            else isinstance(mine, _TYPE_NAMES[_text(arguments[1])])
    if kind == "comparison_operator" and expression.named_child_count == 2:
        operators = [c.type for c in expression.children if not c.is_named]
        left, right = expression.named_children
        mine = _port_value(left, lacked, constants)
        if operators in (["is"], ["is not"]) and right.type == "none" and mine is not ...:
            absent = mine in (None, _OFF)  # a parameter declared not carried is not passed
            return absent if operators == ["is"] else not absent
        if mine is ... or mine is _NOT_NONE or operators not in (["=="], ["!="], ["in"], ["not in"]):
            return ...
        known = _constant(right, constants) if right.type != "tuple" else tuple(
            _constant(c, constants) for c in right.named_children if c.type != "comment")
        if known is ... or (isinstance(known, tuple) and ... in known):
            return ...
        mine = 0 if mine is _OFF else mine
        if operators in (["in"], ["not in"]):
            if not isinstance(known, (dict, tuple)):
                return ...
            try:
                inside = mine in known
            except TypeError:  # an unhashable value asked of a table
                return ...
            return inside if operators == ["in"] else not inside
        equal = mine == known
        return equal if operators == ["=="] else not equal
    return ...


def module_values(root) -> dict[str, object]:
    """``module_constants`` and ``module_tables`` of one module: what ``_port_value`` reads by name. Both
    sides of every symbol of a commit ask about the same modules: answered once per module text."""
    key = root.text if root is not None else b""
    if key not in _MODULE_VALUES:
        if len(_MODULE_VALUES) >= _MODULE_VALUES_BOUND:
            _MODULE_VALUES.clear()
        _MODULE_VALUES[key] = {**module_tables(root), **module_constants(root)}
    return dict(_MODULE_VALUES[key])


_MODULE_VALUES: dict[bytes, dict[str, object]] = {}
_MODULE_VALUES_BOUND = 256


def indistinct_flag(callee, passed: dict[str, object], name: str, constants: dict[str, object]) -> bool | None:
    """``bool(v)`` when ``callee``, passed ``v`` (an int or bool) as ``name`` with the other ``passed`` values,
    reads ``name`` only where that value decides a branch, and decides every one as ``bool(v)`` would (``if
    FLAG:``, ``FLAG == 1``): the callee cannot tell ``v`` from ``bool(v)``; else None."""
    given = passed.get(name, ...)
    return _indistinct(callee, passed, name, constants, given) if isinstance(given, int) else None  # bools too


def _indistinct(callee, passed, name, constants, given) -> bool | None:
    spelled = _spellings(callee).get(name)
    if spelled is None:
        return None
    truth = bool(given)
    key = ("indistinct", callee.text, repr(sorted(passed.items(), key=repr)), name,
           repr(sorted(constants.items(), key=repr)))
    if key not in _DEAD_PARAMETERS:
        if len(_DEAD_PARAMETERS) >= _DEAD_PARAMETERS_BOUND:
            _DEAD_PARAMETERS.clear()
        mine = _port_tokens(callee, {**passed, name: given}, constants, frozenset(), None, frozenset(), spelled)
        as_truth = _port_tokens(callee, {**passed, name: truth}, constants, frozenset(), None, frozenset(), spelled)
        _DEAD_PARAMETERS[key] = frozenset({truth}) if mine == as_truth and spelled not in mine else frozenset()
    return truth if _DEAD_PARAMETERS[key] else None


def _port_tokens(node, lacked, constants, declared, callees, dead_locals, unread: str | None = None,
                 stores: dict[str, int] | None = None, written: set[str] | None = None,
                 kept_writes: frozenset[str] = frozenset()) -> list[str]:
    """``port_tokens``; ``unread``, a parameter as written, is left out of the parameters with the statements
    that only write it. ``stores`` counts, by name, the plain stores (``_plain_store``) among the statements
    kept: a store in a branch the values leave out is no store the tokens hold. ``written`` collects the
    lacked names (as written) whose writes are left out; a write to a name (normalised) in ``kept_writes`` is
    kept."""

    def value(expression):
        """The value an expression takes for the port, or ``...`` when it is not decided by the lacked ones."""
        return _port_value(expression, lacked, constants)

    dead_calls: dict[int, tuple] = {}

    def call_facts(arguments) -> tuple:
        """``(dead, passed, callee, its constants)`` of a call (or launch) of one of ``callees``: the parameters
        it passes that the callee never reads, and the values it passes."""
        if not callees or arguments is None or arguments.type != "argument_list" or arguments.parent is None:
            return set(), {}, None, constants
        if arguments.id not in dead_calls:
            function = arguments.parent.child_by_field_name("function")
            if function is not None and function.type == "subscript":  # kernel[grid](...)
                function = function.child_by_field_name("value")
            callee = callees.get(_text(function).split(".")[-1]) if function is not None else None
            callee, callee_constants = callee if isinstance(callee, tuple) else (callee, constants)
            passed: dict[str, object] = {}
            order = list(parameter_defaults(callee)) if callee is not None else []
            positional = [a for a in arguments.named_children if a.type not in ("comment", "keyword_argument")]
            if len(positional) > len(order) or any(a.type in ("list_splat", "dictionary_splat") for a in positional):
                callee = None
            for argument in arguments.named_children if callee is not None else ():
                if argument.type == "comment":
                    continue
                keyword = argument.type == "keyword_argument"
                expression = argument.child_by_field_name("value") if keyword else argument
                name = normalise_name(_text(argument.child_by_field_name("name"))) if keyword \
                    else order[positional.index(argument)]
                known = value(expression)
                if known is ... and expression.type in ("identifier", "attribute"):
                    known = _constant(expression, constants)
                if known is not ...:
                    passed[name] = known
            dead = dead_parameters(callee, passed, callee_constants) if callee is not None else set()
            dead_calls[arguments.id] = (dead, passed, callee, callee_constants)
        return dead_calls[arguments.id]

    def dead_in(arguments) -> set[str]:
        """The parameters a call (or launch) of one of ``callees`` passes by keyword that the callee never reads."""
        return call_facts(arguments)[0]

    def writes_lacked(statement) -> bool:
        if statement.type != "expression_statement" or statement.named_child_count != 1:
            return False
        inner = statement.named_children[0]
        left = inner.child_by_field_name("left") if inner.type in ("assignment", "augmented_assignment") else None
        if left is None or left.type != "identifier":
            return False
        if _text(left) == unread:
            return True
        if unread is not None and any(n.type == "identifier" and _text(n) == unread
                                      for n in _walk(inner.child_by_field_name("right"))):
            return False  # it reads the parameter asked about
        name = normalise_name(_text(left))
        return name in lacked and name not in kept_writes

    def idle(branch) -> bool:
        """An ``if`` whose condition calls nothing and whose every body only writes lacked names (or is
        such an ``if``): whichever way it goes, the port's names are untouched."""
        condition = branch.child_by_field_name("condition")
        if condition is None or any(n.type == "call" for n in _walk(condition)):
            return False
        bodies = _if_bodies(branch)
        if any(c.type == "elif_clause" and any(n.type == "call" for n in _walk(c.child_by_field_name("condition")))
               for c in branch.children):
            return False
        return all(body is not None and all(
            s.type == "pass_statement" or writes_lacked(s) or (s.type == "if_statement" and idle(s))
            for s in body.named_children if s.type != "comment") for body in bodies)

    def expand(current):
        kind, parent = current.type, current.parent
        if parent is not None and parent.type == "parameters":
            name = current if kind == "identifier" else (current.child_by_field_name("name") or next(
                (c for c in current.named_children if c.type == "identifier"), None))
            return [] if name is not None and (normalise_name(_text(name)) in lacked or _text(name) == unread) \
                else None
        if kind == "keyword_argument":
            name = normalise_name(_text(current.child_by_field_name("name")))
            if name in declared:
                return []
            passed = current.child_by_field_name("value")
            if passed is not None and not any(n.type == "call" for n in _walk(passed)) \
                    and name in dead_in(current.parent):
                return []  # never read, and evaluating it does nothing
            if passed is not None and passed.type in ("true", "false", "integer"):
                _, values, callee, callee_constants = call_facts(current.parent)
                same = indistinct_flag(callee, values, name, callee_constants) if callee is not None else None
                if same is not None:
                    return [current.child_by_field_name("name"), "=", repr(same)]
            return None
        if dead_locals and _plain_store(current, lacked, constants) in dead_locals:
            return []
        if kind == "identifier" and parent is not None and parent.type == "argument_list" \
                and normalise_name(_text(current)) in declared:
            return []
        if writes_lacked(current):
            if written is not None:
                inner = current.named_children[0]
                written.add(_text(inner.child_by_field_name("left")))
            return []
        if kind == "assert_statement" and _truth(value(next((c for c in current.named_children
                                                             if c.type != "comment"), None))) is True:
            return []  # it holds for the port's values: it does nothing
        if kind == "if_statement":
            taken = _truth(value(current.child_by_field_name("condition")))
            if taken is None:
                if not idle(current):
                    return None
                if written is not None:
                    written.update(_text(n.named_children[0].child_by_field_name("left"))
                                   for n in _walk(current) if writes_lacked(n))
                return []
            return branch_taken(current, taken, lambda condition: _truth(value(condition)))
        if kind == "conditional_expression" and len(current.named_children) == 3:
            taken = _truth(value(current.named_children[1]))
            if taken is not None:
                return [current.named_children[0] if taken else current.named_children[2]]
        if stores is not None and kind == "expression_statement":
            stored = _plain_store(current, lacked, constants)
            if stored is not None:
                stores[stored] = stores.get(stored, 0) + 1
        return None

    return comment_free_tokens(node, expand=expand)


def lacked_parameters(old, new, port_names: set[str], declared: set[str]) -> dict[str, tuple[object, object]] | None:
    """Normalised name -> (its value on the old side, on the new side) of each upstream parameter the port
    lacks (or declares not carried); None when the port's parameters cannot all be bound to upstream's by
    name on both sides, or a parameter the port lacks with no default is new (see the module)."""
    before, after = parameter_defaults(old), parameter_defaults(new)
    if not port_names or not port_names <= set(before) or not port_names <= set(after):
        return None
    lacked: dict[str, tuple[object, object]] = {}
    for name in (set(before) | set(after)) - (port_names - declared):
        was, now = before.get(name, _OFF), after.get(name, _OFF)
        if name not in before and now is _OFF and name not in declared:
            return None  # a new required input: the parameter rules judge it
        # Declared not carried: off. Lacked: upstream's default, not known without one.
        lacked[name] = (_OFF, _OFF) if name in declared else (... if was is _OFF else was, ... if now is _OFF else now)
    return lacked


def bound_by_port(caller, port_names: list[str], declared: set[str], base=None) -> set[str] | None:
    """The parameters (normalised) of ``caller``, the upstream definition a port anchors, that the port's
    ``port_names`` (in order, ``self``/``ctx`` left out) bind: by name when every one of them is upstream's (a
    respelling ``normalise_name`` folds is the same name).

    A re-implementation with names of its own binds by position, but positions are read where the port is
    taken as in sync: on ``base``, the anchored definition at the scanned range's base, when every later
    parameter there has a default (or is declared not carried; the port is upstream called with fewer
    arguments). Those leading names are then looked up in ``caller`` by name, so a parameter upstream inserted
    in the middle since does not shift the port's inputs; a leading name upstream renamed in place since (a
    new name in its slot, between the same neighbours) is looked up as its new name. Without ``base``, when a
    name the port shares with upstream sits at another position there, or when a leading name is no longer
    upstream's and no slot says what it became, which parameters
    the port takes is not known: every one not declared not carried counts as the port's input (none is folded
    at its default; only what a call leaves out is). None when the port has no parameters."""
    parameters = [n for n in parameter_defaults(caller) if n not in ("self", "ctx", "cls")]
    if not port_names:
        return None
    if set(port_names) <= set(parameters):
        return set(port_names)
    unknown = set(parameters) - set(declared)
    if base is None:
        return unknown
    defaults = parameter_defaults(base)
    leading = [n for n in defaults if n not in ("self", "ctx", "cls")]
    if len(port_names) > len(leading) \
            or any(defaults[n] is _OFF and n not in declared for n in leading[len(port_names):]):
        return unknown
    now = [n if n in parameters else _renamed_in_slot(n, leading, parameters) for n in leading[:len(port_names)]]
    if any(mine not in (then, since) and mine in set(leading) | set(parameters)
           for mine, then, since in zip(port_names, leading, now)):
        return unknown  # a name the port shares with upstream sits elsewhere: positions are not the port's
    return set(now) if set(now) <= set(parameters) else unknown


def bound_since_base(caller, port_names: list[str], declared: set[str], base=None) -> set[str] | None:
    """``bound_by_port``; where positions say nothing (every parameter not declared counts as the port's),
    less the parameters upstream added since ``base`` (the anchored definition at the scanned range's base,
    where the port is taken as in sync) under a name the port does not use: the port did not have them there,
    so it lacks them (``launched-value``). Only where every parameter of the base is still there by name: a
    name new since may otherwise be an old parameter renamed."""
    bound = bound_by_port(caller, port_names, declared, base)
    parameters = parameter_defaults(caller)
    if bound is None or base is None or set(bound) < set(parameters) - set(declared) - {"self", "ctx", "cls"}:
        return bound
    if not set(parameter_defaults(base)) <= set(parameters):
        return bound  # a parameter of the base was renamed or removed since: a new name may be an old one
    return set(bound) - (set(parameters) - set(parameter_defaults(base)) - set(port_names))


def _renamed_in_slot(name: str, before: list[str], after: list[str]) -> str | None:
    """The parameter of ``after`` that is ``before``'s ``name`` renamed in place: ``name`` lies in a run of
    consecutive parameters ``after`` no longer has, and as many names new since ``before`` stand in its place
    between the same neighbours (the same first or last place); the one at ``name``'s position in the run is its
    new name. None when no slot says so (a parameter removed, or one inserted beside the run)."""
    at = before.index(name)
    start, end = at, at + 1
    while start > 0 and before[start - 1] not in after:
        start -= 1
    while end < len(before) and before[end] not in after:
        end += 1
    previous = before[start - 1] if start > 0 else None
    following = before[end] if end < len(before) else None
    slot = after.index(previous) + 1 if previous is not None else 0
    stop = after.index(following) if following is not None else len(after)
    if stop - slot != end - start or any(n in before for n in after[slot:stop]):
        return None
    return after[slot + at - start]


def _calls_of(node, name: str) -> list:
    return [n for n in _walk(node) if n.type == "call" and n.child_by_field_name("function") is not None
            and _text(n.child_by_field_name("function")).split(".")[-1] == name]


def lacked_through_caller(caller, callee, callee_name: str, bound: set[str],
                          declared: set[str]) -> dict[str, object] | None:
    """Normalised name -> the value it takes, of each parameter of ``callee`` (a definition ``caller``, the one a
    port anchors, calls once as ``callee_name``) that the port lacks: one ``caller`` passes straight from its own
    parameter the port lacks takes that parameter's default (off when declared not carried), and one the call
    leaves out takes ``callee``'s own default (one with no default is not known: ``...``). None when the call is
    not there once (see the module)."""
    calls = _calls_of(caller, callee_name)
    if len(calls) != 1:
        return None
    defaults = parameter_defaults(caller)
    rebound = {normalise_name(_text(n.child_by_field_name("left"))) for n in _walk(caller)
               if n.type in ("assignment", "augmented_assignment")
               and n.child_by_field_name("left") is not None and n.child_by_field_name("left").type == "identifier"}
    parameters = [n for n in parameter_defaults(callee)]
    own = parameter_defaults(callee)
    passed: dict[str, object] = {}
    arguments = [a for a in calls[0].child_by_field_name("arguments").named_children if a.type != "comment"]
    for position, argument in enumerate(arguments):
        if argument.type == "keyword_argument":
            key, expression = normalise_name(_text(argument.child_by_field_name("name"))), \
                argument.child_by_field_name("value")
        elif argument.type in ("list_splat", "dictionary_splat") or position >= len(parameters):
            return None
        else:
            key, expression = parameters[position], argument
        passed[key] = expression
    lacked: dict[str, object] = {}
    for name in parameters:
        expression = passed.get(name)
        if expression is None:
            if own[name] is _OFF:
                return None  # a required parameter left out
            lacked[name] = own[name]
            continue
        source = normalise_name(_text(expression)) if expression.type == "identifier" else None
        if source is None or source not in defaults or source in bound or source in rebound:
            continue  # computed, or one the port has: the port's own input
        if source in declared:
            lacked[name] = _OFF
        else:  # with no default its value is not known: the branches it decides are kept
            lacked[name] = ... if defaults[source] is _OFF else defaults[source]
    return lacked


def same_for_port_parameters(old, new, lacked: dict[str, tuple[object, object]],
                             constants: tuple[dict[str, object], dict[str, object]],
                             callees: tuple[dict | None, dict | None] = (None, None)) -> bool:
    """True when two Python definition nodes differ, and are the same for a port lacking ``lacked``
    (``lacked_parameters``), with each side's module ``constants``."""
    if old is None or new is None or old.has_error or new.has_error or not lacked:
        return False
    if comment_free_tokens(old) == comment_free_tokens(new):
        return False
    declared = {n for n, v in lacked.items() if v == (_OFF, _OFF)}
    unknown = sorted(n for n, v in lacked.items() if v == (..., ...) and (n in _none_tested(old)
                                                                          or n in _none_tested(new)))
    if port_tokens(old, {n: v[0] for n, v in lacked.items()}, constants[0], declared, callees[0]) \
            == port_tokens(new, {n: v[1] for n, v in lacked.items()}, constants[1], declared, callees[1]):
        return True  # the same with their branches kept
    if not unknown or len(unknown) > _CASE_SPLIT_LIMIT:
        return False
    for case in itertools.product((None, _NOT_NONE), repeat=len(unknown)):
        chosen = {**lacked, **{n: (value, value) for n, value in zip(unknown, case)}}
        if port_tokens(old, {n: v[0] for n, v in chosen.items()}, constants[0], declared, callees[0]) \
                != port_tokens(new, {n: v[1] for n, v in chosen.items()}, constants[1], declared, callees[1]):
            return False
    return True


_CASE_SPLIT_LIMIT = 3
"""At most this many required inputs the port lacks are decided case by case (2**n comparisons)."""


def _none_tested(node) -> set[str]:
    """The names (normalised) ``node`` compares with ``None`` (``x is None``, ``x is not None``)."""
    return {normalise_name(_text(n.named_children[0])) for n in _walk(node)
            if n.type == "comparison_operator" and n.named_child_count == 2 and n.named_children[1].type == "none"
            and n.named_children[0].type == "identifier"
            and [c.type for c in n.children if not c.is_named] in (["is"], ["is not"])}


def module_tables(root) -> dict[str, dict]:
    """Module-level names bound once to a dict literal whose keys are literals and whose values are literals
    or constants of the module (``_str_to_mode = {"fp32": _MODE_FP32.value}``), and never written through
    afterwards (no ``T[k] = v``, ``del T[k]``, ``T.update(...)``, ``T.pop(...)``, ...)."""
    constants = module_constants(root)
    found: dict[str, list] = {}
    for name, assignment in _module_assignments(root):
        right = assignment.child_by_field_name("right")
        table: dict | None = {} if right is not None and right.type == "dictionary" else None
        for pair in right.named_children if table is not None else ():
            if pair.type == "comment":
                continue
            key = _literal(pair.child_by_field_name("key")) if pair.type == "pair" else ...
            value = _constant(pair.child_by_field_name("value"), constants) if pair.type == "pair" else ...
            if key is ... or value is ... or key in table:
                table = None
                break
            table[key] = value
        found.setdefault(name, []).append(table)
    tables = {name: values[0] for name, values in found.items() if len(values) == 1 and values[0] is not None}
    for node in _walk(root):
        if node.type == "subscript" and node.parent is not None and _text(node.child_by_field_name("value")) in tables \
                and (node.parent.type in ("delete_statement", "augmented_assignment", "pattern_list", "expression_list")
                     or (node.parent.type == "assignment" and node.parent.child_by_field_name("left") == node)):
            tables.pop(_text(node.child_by_field_name("value")), None)
        elif node.type == "attribute" and _text(node.child_by_field_name("object")) in tables \
                and _text(node.child_by_field_name("attribute")) in ("update", "pop", "popitem", "setdefault",
                                                                     "clear", "__setitem__", "__delitem__"):
            tables.pop(_text(node.child_by_field_name("object")), None)
    return tables


def _tested_names(node) -> set[str]:
    """The names the conditions of ``node``'s ``if`` statements and conditional expressions read."""
    found: set[str] = set()
    for current in _walk(node):
        if current.type in ("if_statement", "elif_clause", "conditional_expression"):
            condition = current.child_by_field_name("condition") if current.type != "conditional_expression" \
                else (current.named_children[1] if len(current.named_children) == 3 else None)
            found |= {_text(n) for n in _walk(condition) if n.type == "identifier"} if condition is not None else set()
    return found


def _launches_of(root, name: str) -> list:
    """The calls ``name(...)`` and launches ``name[grid](...)`` anywhere in a module."""
    found = []
    for node in _walk(root):
        function = node.child_by_field_name("function") if node.type == "call" else None
        if function is not None and function.type == "subscript":
            function = function.child_by_field_name("value")
        if function is not None and function.type == "identifier" and _text(function) == name:
            found.append(node)
    return found


def _calls_by_name(node) -> dict[str, list[str]]:
    """Bare called name -> the texts of its calls' argument lists in ``node``, in order."""
    found: dict[str, list[str]] = {}
    for current in _walk(node):
        function = current.child_by_field_name("function") if current.type == "call" else None
        if function is not None and function.type == "subscript":
            function = function.child_by_field_name("value")
        if function is not None and function.type == "identifier":
            found.setdefault(_text(function), []).append(_text(current.child_by_field_name("arguments")))
    return found


def _called_names(node) -> set[str]:
    """The bare names ``node`` calls or launches (``f(...)``, ``k[grid](...)``)."""
    names = set()
    for current in _walk(node):
        function = current.child_by_field_name("function") if current.type == "call" else None
        if function is not None and function.type == "subscript":
            function = function.child_by_field_name("value")
        if function is not None and function.type == "identifier":
            names.add(_text(function))
    return names


def _enclosing_function(node):
    current = node.parent
    while current is not None and current.type not in ("function_definition", "lambda"):
        current = current.parent
    return current if current is not None and current.type == "function_definition" else None


def _passed(call, parameters: list[str]) -> dict[str, object] | None:
    """Normalised parameter -> the argument node a call passes it (by position, then by keyword); None when
    the call unpacks arguments or passes more than there are parameters."""
    arguments = [a for a in call.child_by_field_name("arguments").named_children if a.type != "comment"]
    passed: dict[str, object] = {}
    for position, argument in enumerate(arguments):
        if argument.type == "keyword_argument":
            passed[normalise_name(_text(argument.child_by_field_name("name")))] = argument.child_by_field_name("value")
        elif argument.type in ("list_splat", "dictionary_splat") or position >= len(parameters):
            return None
        else:
            passed[parameters[position]] = argument
    return passed


def _decided(condition, name: str, value, constants: dict[str, object]) -> bool | None:
    """The value of an ``if`` test that reads only ``name`` (whose value is ``value``): ``isinstance(name,
    int)``, ``name == CONST``, ``name != CONST``, ``not ...``; None for anything else."""
    condition = condition.named_children[0] if condition.type == "parenthesized_expression" \
        and condition.named_child_count == 1 else condition
    if condition.type == "not_operator":
        inner = _decided(condition.child_by_field_name("argument"), name, value, constants)
        return None if inner is None else not inner
    if condition.type == "call" and _text(condition.child_by_field_name("function")) == "isinstance":
        arguments = [a for a in condition.child_by_field_name("arguments").named_children if a.type != "comment"]
        if len(arguments) == 2 and _text(arguments[0]) == name and _text(arguments[1]) in _TYPE_NAMES:
            return isinstance(value, _TYPE_NAMES[_text(arguments[1])])  # as Python answers: a bool is an int
        return None
    if condition.type == "comparison_operator" and condition.named_child_count == 2:
        operators = [_text(c) for c in condition.children if not c.is_named]
        left, right = condition.named_children
        if operators in (["=="], ["!="]) and _text(left) == name:
            other = _constant(right, constants)
            if other is ... or other is _OFF:
                return None
            return (value == other) == (operators == ["=="])
    return None


def value_at_launch(function, name: str, entry, launch, tables: dict[str, dict],
                    constants: dict[str, object]):
    """The value a parameter ``name`` of ``function`` has at ``launch`` (a call inside it, in no loop), when it
    enters as ``entry``: unchanged when nothing in ``function`` binds it; else its one binding, ``name =
    TABLE[name]`` (a ``module_tables`` table read by the entry value) or a constant, placed in straight-line
    code before the launch or in ``if`` statements that tests of ``name`` alone decide (``if not isinstance(name,
    int):``). A launch inside a ``with`` block (a device guard) runs once, as straight-line code does; one in a
    loop or a ``try`` is not followed. ``...`` when not known."""
    if entry is ... or entry is _OFF:
        return ...
    binders = [n for n in _walk(function)
               if (n.type in ("assignment", "augmented_assignment", "for_statement", "for_in_clause",
                              "named_expression", "with_item", "as_pattern")
                   and any(_text(i) == name for i in _walk(n.child_by_field_name("left") or n.child_by_field_name(
                       "name") or n.child_by_field_name("alias") or n) if i.type == "identifier"))
               or (n.type in ("global_statement", "nonlocal_statement") and name in _text(n))]
    binders = [n for n in binders if n.type != "with_item" or " as " in _text(n)]
    for ancestor in _ancestors(launch, function):
        if ancestor.type in ("for_statement", "while_statement", "try_statement"):
            return ...  # a `with` body runs once, and a `with ... as NAME` is a binder below
    if not binders:
        return entry
    if len(binders) != 1 or binders[0].type != "assignment" \
            or _text(binders[0].child_by_field_name("left")) != name or binders[0].end_byte > launch.start_byte:
        return ...
    binder = binders[0]
    right = binder.child_by_field_name("right")
    if right is not None and right.type == "subscript" and _text(right.child_by_field_name("subscript")) == name \
            and _text(right.child_by_field_name("value")) in tables:
        table = tables[_text(right.child_by_field_name("value"))]
        try:
            bound = table.get(entry, ...)
        except TypeError:  # an unhashable entry value
            return ...
    else:
        bound = _constant(right, constants) if right is not None else ...
    if bound is ...:
        return ...
    runs = True
    child = binder
    for ancestor in _ancestors(binder, function):
        if ancestor.type in ("block", "expression_statement", "module"):
            child = ancestor
            continue
        if ancestor.type == "if_statement":
            if any(c.type == "elif_clause" for c in ancestor.children):
                return ...
            taken = _decided(ancestor.child_by_field_name("condition"), name, entry, constants)
            if taken is None:
                return ...
            in_consequence = child == ancestor.child_by_field_name("consequence")
            runs = runs and (taken if in_consequence else not taken)
            child = ancestor
            continue
        if ancestor.type == "else_clause":
            child = ancestor
            continue
        return ...
    return bound if runs else entry


def _ancestors(node, stop):
    """The nodes above ``node`` up to (not including) ``stop``."""
    current = node.parent
    while current is not None and current != stop:
        yield current
        current = current.parent


# --- Python: platforms the port never names ----------------------------------------

PLATFORMS: dict[str, tuple[str, ...]] = {
    "hip": ("hip", "rocm", "amd", "cdna", "rdna", "gfx"),
    "xpu": ("xpu", "intel", "pvc", "xe"),
    "npu": ("npu",),
    "mps": ("mps",),
    "musa": ("musa",),
}
"""GPU platforms besides the default one, by the word upstream tests them with, and the words that name them
(the vendor's name among them: a library may say ``device_platform == "amd"`` or ``is_intel``; and the
vendor's GPU architecture families, which run only there: AMD's CDNA, RDNA and ``gfx`` targets, Intel's PVC
and Xe, so ``is_cdna()`` or ``is_gfx942()`` tests the ``hip`` platform)."""

_FAMILIES = frozenset({"cdna", "rdna", "gfx", "pvc", "xe"})
"""The architecture-family words of ``PLATFORMS``: only these take a generation number."""

_GENERATION = re.compile(r"^([a-z]+?)\d+[a-z]?$")
"""A family word with its generation or target number (``cdna3``, ``gfx942``, ``gfx90a``)."""

_DEFAULT_VENDOR = "nvidia"
"""The default device's vendor: a platform name equal to it is the port's platform when the tree names no
other platform (AMD's included, whose devices PyTorch also calls ``cuda``)."""

_PLATFORM_PATTERNS = {platform: re.compile(rb"(?i)(?<![a-z])(?:" + b"|".join(w.encode() for w in words) + rb")"
                                         + (rb"" if platform == "hip" else rb"(?![a-z])"))
                      for platform, words in PLATFORMS.items()}
"""Each platform's words as they may stand in code (``named_platforms``)."""

_HELPER_NAME = re.compile(r"^_*(?:is|on|use|using|has|running_on)_(?:torch_)?([a-z]+(?:\d+[a-z]?)?)(?:_available)?$")


def _code_text(source: bytes, path: str) -> bytes:
    """What of a source file is code: its identifiers and string literals, without comments and without
    strings standing alone as statements (docstrings), which say things but decide nothing."""
    language = language_for_path(path)
    if language == "python":
        kept: list[bytes] = []
        try:
            tokens = list(tokenize.tokenize(io.BytesIO(source).readline))
        except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
            return re.sub(rb"#[^\n]*", b"", source)
        layout = (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
                  tokenize.COMMENT)
        significant = [t for t in tokens if t.type not in (tokenize.NL, tokenize.COMMENT)]
        for position, token in enumerate(significant):
            if token.type == tokenize.STRING:
                before = significant[position - 1].type if position else tokenize.NEWLINE
                after = significant[position + 1].type if position + 1 < len(significant) else tokenize.NEWLINE
                if before in layout and after in (tokenize.NEWLINE, tokenize.ENDMARKER):
                    continue  # a docstring, or a string standing alone
                kept.append(token.string.encode("utf-8", errors="replace"))
            elif token.type == tokenize.NAME:
                kept.append(token.string.encode("utf-8", errors="replace"))
        return b"\n".join(kept)
    return re.sub(rb"/\*.*?\*/|//[^\n]*", b"", source, flags=re.DOTALL)


def named_platforms(sources: dict[str, bytes]) -> set[str]:
    """The platforms of ``PLATFORMS`` that the code of one of ``sources`` (path -> bytes) names: a word of
    it, in any case, as an identifier part (``is_hip``, ``HIP_VERSION``, ``hipLaunch``) or in a string;
    comments and docstrings are prose and decide nothing."""
    found: set[str] = set()
    for path, source in sources.items():
        if source and language_for_path(path) is not None:
            found |= _platforms_named_in(source, path)
    return found


@lru_cache(maxsize=4096)
def _platforms_named_in(source: bytes, path: str) -> frozenset[str]:
    """The platforms one file's code names (``named_platforms``), read once per file text: a scan asks
    for the tree's platforms once per classifier, and the tree's files are the same every time."""
    code = _code_text(source, path)
    return frozenset(platform for platform, pattern in _PLATFORM_PATTERNS.items() if pattern.search(code))


def _platform_test(node, absent: set[str], helpers: dict[str, str] | None = None,
                   seen: set[str] | None = None) -> bool | None:
    """False for a test of a platform in ``absent`` (the port never runs there), True for its negation, None
    for anything else (see the module). ``helpers``: bare name -> the platform a function of the same file
    tests (its body only returns such a test); ``seen`` collects the platforms that decided."""
    seen = set() if seen is None else seen

    def test(current):
        return _platform_test(current, absent, helpers, seen)

    kind = node.type
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return test(node.named_children[0])
    if kind == "not_operator":
        inner = test(node.child_by_field_name("argument"))
        return None if inner is None else not inner
    if kind == "boolean_operator":
        operator = next((c.type for c in node.children if not c.is_named), "")
        left = test(node.child_by_field_name("left"))
        right = test(node.child_by_field_name("right"))
        if operator == "and":
            return False if left is False or right is False else (True if left and right else None)
        if operator == "or":
            return True if left is True or right is True else (False if left is False and right is False else None)
        return None
    if kind == "comparison_operator" and node.named_child_count == 2:
        operators = [c.type for c in node.children if not c.is_named]
        left, right = node.named_children
        platform = _version_attribute(left, absent)
        if operators in (["is"], ["is not"]) and right.type == "none" and platform:
            seen.add(platform)
            return operators == ["is"]
        return _device_comparison(operators, left, right, absent, seen)
    if kind == "attribute":
        platform = _version_attribute(node, absent)
        if platform:
            seen.add(platform)
            return False
        return None
    if kind == "call":
        function = node.child_by_field_name("function")
        arguments = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"] \
            if node.child_by_field_name("arguments") is not None else [None]
        if function is None or arguments:
            return None
        parts = _text(function).split(".")
        platform = None
        if function.type == "identifier":
            match = _HELPER_NAME.match(parts[-1].lower())
            platform = _platform_of(match.group(1)) if match is not None else (helpers or {}).get(parts[-1])
        elif function.type == "attribute" and parts[0] == "torch" and len(parts) >= 3 and parts[-1] == "is_available":
            platform = _platform_of(parts[-2])  # torch.xpu.is_available(), torch.backends.mps.is_available()
        elif function.type == "attribute" and _AVAILABILITY_NAME.match(parts[-1].lower()):
            platform = _platform_of(_AVAILABILITY_NAME.match(parts[-1].lower()).group(1))  # utils.is_npu_available()
        elif function.type == "attribute" and _HELPER_NAME.match(parts[-1].lower()):
            platform = _platform_of(_HELPER_NAME.match(parts[-1].lower()).group(1))  # utils.is_amd()
        if platform in absent:
            seen.add(platform)
            return False
    return None


_AVAILABILITY_NAME = re.compile(r"^_*is_(?:torch_)?([a-z]+)_available$")
"""A helper reached through a module (``utils.is_npu_available()``) is a platform test only by this name."""

_OWN_DEVICE_PLATFORMS = ("xpu", "npu", "mps", "musa")
"""Platforms whose tensors carry a device name of their own; on the others (the default one, and ``hip``,
whose builds of torch call their devices ``cuda``) a tensor's device is named ``cuda``."""

_DEFAULT_DEVICE = "cuda"


def _literal_string(node) -> str | None:
    """The text of a plain string literal (no interpolation), else None."""
    if node is None or node.type != "string" or any(c.type == "interpolation" for c in node.named_children):
        return None
    match = re.fullmatch(r"[rRuU]?(['\"])(.*)\1", _text(node), flags=re.DOTALL)
    return match.group(2) if match is not None else None


def _device_name_value(literal: str, absent: set[str], seen: set[str]) -> bool | None:
    """Whether the port's device is named ``literal``: False for a word of a platform in ``absent``, True
    for ``cuda`` when every platform with a device name of its own is absent; else None (``cpu``, a word
    of a platform the tree names, anything else)."""
    word = literal.strip().lower()
    platform = _platform_of(word)
    if platform is not None and platform in absent:
        seen.add(platform)
        return False
    if word == _DEFAULT_DEVICE and all(p in absent for p in _OWN_DEVICE_PLATFORMS):
        seen.update(_OWN_DEVICE_PLATFORMS)
        return True
    if word == _DEFAULT_VENDOR and all(p in absent for p in PLATFORMS):
        seen.update(PLATFORMS)
        return True
    return None


def _device_comparison(operators: list[str], left, right, absent: set[str], seen: set[str]) -> bool | None:
    """A device or backend name (a name, attribute or call) compared with platform names:
    ``infer_device() == "npu"`` (False for an absent platform), ``x.device.type != "cuda"`` (False when
    the tree names no platform with a device name of its own), ``device in ("xpu", "npu")``."""
    if left.type not in ("identifier", "attribute", "call"):
        left, right = right, left
        if operators in (["in"], ["not in"]) or left.type not in ("identifier", "attribute", "call"):
            return None
    found: set[str] = set()
    if operators in (["=="], ["!="]):
        literal = _literal_string(right)
        value = _device_name_value(literal, absent, found) if literal is not None else None
        if value is None:
            return None
        seen |= found
        return value if operators == ["=="] else not value
    if operators in (["in"], ["not in"]) and right.type in ("tuple", "list", "set"):
        literals = [_literal_string(item) for item in right.named_children if item.type != "comment"]
        if not literals or any(literal is None for literal in literals):
            return None
        values = [_device_name_value(literal, absent, found) for literal in literals]
        value = True if True in values else (False if all(v is False for v in values) else None)
        if value is None:
            return None
        seen |= found
        return value if operators == ["in"] else not value
    return None


def _platform_of(word: str) -> str | None:
    found = next((platform for platform, words in PLATFORMS.items() if word in words), None)
    numbered = _GENERATION.match(word) if found is None else None
    if numbered is not None:  # a family with its generation (cdna3, gfx942); a platform name never takes one
        found = next((platform for platform, words in PLATFORMS.items()
                      if numbered.group(1) in _FAMILIES and numbered.group(1) in words), None)
    return found


def _version_attribute(node, absent: set[str]) -> str | None:
    """The platform of ``absent`` whose version attribute ``node`` is (``torch.version.hip``), else None."""
    if node is None or node.type != "attribute":
        return None
    parts = _text(node).split(".")
    found = len(parts) == 3 and parts[:2] == ["torch", "version"] and parts[2] in absent
    return parts[2] if found else None


def platform_helpers(root, absent: set[str]) -> dict[str, str]:
    """Bare name -> platform, of each module-level function of ``root`` taking no required argument whose
    body (its docstring aside) is only ``return`` of a test of a platform in ``absent`` (``def _amd(): return
    torch.version.hip is not None``)."""
    found: dict[str, str] = {}
    for statement in root.named_children if root is not None else ():
        function = _function(statement)
        if function is None or function.type != "function_definition":
            continue
        if any(default is _OFF for default in parameter_defaults(function).values()):
            continue
        body = [s for s in function.child_by_field_name("body").named_children if s.type != "comment"]
        if body and body[0].type == "expression_statement" and body[0].named_child_count == 1 \
                and body[0].named_children[0].type == "string":
            body = body[1:]
        if len(body) != 1 or body[0].type != "return_statement" or not body[0].named_children:
            continue
        seen: set[str] = set()
        if _platform_test(body[0].named_children[0], absent, None, seen) is not None and len(seen) == 1:
            found[_text(function.child_by_field_name("name"))] = seen.pop()
    return found


def _platform_expand(absent: set[str], helpers: dict[str, str] | None):
    """The ``expand`` of ``comment_free_tokens`` that replaces each ``if`` and conditional expression a test
    of a platform in ``absent`` decides by the branch taken, and a decided operand of ``and``/``or`` that
    leaves the result to the other (``cond and not is_npu()``) by nothing."""
    def expand(current):
        kind = current.type
        if kind == "if_statement":
            taken = _platform_test(current.child_by_field_name("condition"), absent, helpers)
            if taken is None:
                return None
            return branch_taken(current, taken)
        if kind == "conditional_expression" and len(current.named_children) == 3:
            taken = _platform_test(current.named_children[1], absent, helpers)
            if taken is not None:
                return [current.named_children[0] if taken else current.named_children[2]]
        if kind == "boolean_operator":
            operator = next((c.type for c in current.children if not c.is_named), "")
            left, right = current.child_by_field_name("left"), current.child_by_field_name("right")
            neutral = operator == "and"  # ``x and True`` is ``x``; ``x or False`` is ``x``
            if left is not None and right is not None and operator in ("and", "or") \
                    and _platform_test(current, absent, helpers) is None:
                if _platform_test(right, absent, helpers) is neutral:
                    return [left]
                if _platform_test(left, absent, helpers) is neutral:
                    return [right]
        return None
    return expand


def platform_tokens(node, absent: set[str], helpers: dict[str, str] | None = None) -> list[str]:
    """A Python definition's tokens with each ``if`` and conditional expression a test of a platform in
    ``absent`` decides replaced by the branch taken."""
    return comment_free_tokens(node, expand=_platform_expand(absent, helpers))


_DEFINITION_TYPES = ("function_definition", "class_definition", "decorated_definition")
_IMPORT_TYPES = ("import_statement", "import_from_statement")


_MODULE_TOKENS: dict[tuple, object] = {}
"""``module_platform_tokens`` and ``test_only_names`` by (module text, arguments): in a dense history the
new side of one commit's module is the old side of the next, and each answer tokenizes the whole module.
Bounded: cleared when it reaches ``_MODULE_TOKENS_BOUND`` answers."""
_MODULE_TOKENS_BOUND = 64


def _module_answer(kind: str, compute, root, absent, helpers, *rest):
    key = (kind, root.text, frozenset(absent), tuple(sorted((helpers or {}).items())), *rest)
    if key not in _MODULE_TOKENS:
        if len(_MODULE_TOKENS) >= _MODULE_TOKENS_BOUND:
            _MODULE_TOKENS.clear()
        _MODULE_TOKENS[key] = compute()
    return _MODULE_TOKENS[key]


def module_platform_tokens(root, absent: set[str], helpers: dict[str, str] | None = None,
                           test_only: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """See ``_module_platform_tokens`` (answered once per module text and arguments)."""
    return list(_module_answer("tokens", lambda: _module_platform_tokens(root, absent, helpers, test_only),
                               root, absent, helpers, frozenset(test_only)))


def _module_platform_tokens(root, absent: set[str], helpers: dict[str, str] | None = None,
                            test_only: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The tokens of a Python module's program outside its definitions (each definition stands as its
    name: it is a symbol of its own), with the branches tests of platforms in ``absent`` decide replaced
    by the branch taken. Each import stands as one ``import NAME=TARGET`` token per name it binds, a run
    of them in a canonical order (imports next to each other bind the same whatever their order); a name
    of ``test_only`` (``test_only_names`` of either side) that nothing reads once the tests are folded is
    left out."""
    fold = _platform_expand(absent, helpers)
    read = Counter(comment_free_tokens(root, expand=fold))

    def expand(current):
        if current.type in _DEFINITION_TYPES:
            inner = current.child_by_field_name("definition") if current.type == "decorated_definition" else current
            name = inner.child_by_field_name("name") if inner is not None else None
            return ["def", _text(name) if name is not None else "?"]
        if current.type in _IMPORT_TYPES:
            own = Counter(comment_free_tokens(current))
            return [f"{_IMPORT_MARK}{name}={target}" for name, target in _import_bindings(current)
                    if name.split(".")[0] not in test_only or read[name.split(".")[0]] > own[name.split(".")[0]]]
        return fold(current)
    tokens = comment_free_tokens(root, expand=expand)
    ordered: list[str] = []
    run: list[str] = []
    for token in tokens + [""]:
        if token.startswith(_IMPORT_MARK):
            run.append(token)
            continue
        ordered += sorted(set(run)) + ([token] if token else [])
        run = []
    return ordered


def test_only_names(root, absent: set[str], helpers: dict[str, str] | None = None) -> set[str]:
    """See ``_test_only_names`` (answered once per module text and arguments)."""
    return set(_module_answer("test-only", lambda: frozenset(_test_only_names(root, absent, helpers)),
                              root, absent, helpers))


def _test_only_names(root, absent: set[str], helpers: dict[str, str] | None = None) -> set[str]:
    """Names a module-level import binds that the module reads only in tests of platforms in ``absent``:
    read before the tests are folded (``_platform_expand``), by nothing after."""
    read = Counter(comment_free_tokens(root, expand=_platform_expand(absent, helpers)))
    written = Counter(comment_free_tokens(root))
    found = set()
    for statement in (n for n in _walk(root) if n.type in _IMPORT_TYPES):
        own = Counter(comment_free_tokens(statement))
        found |= {name.split(".")[0] for name, _ in _import_bindings(statement)
                  if read[name.split(".")[0]] <= own[name.split(".")[0]] < written[name.split(".")[0]]}
    return found


_IMPORT_MARK = "\x00import "


def _import_bindings(statement) -> list[tuple[str, str]]:
    """``(name, target)`` for each name an import statement binds (``import a.b`` binds ``a`` to ``a.b``;
    ``from m import x as y``, ``y`` to ``m.x``)."""
    found = []
    module = statement.child_by_field_name("module_name") if statement.type == "import_from_statement" else None
    prefix = _text(module) + "." if module is not None else ""
    for child in statement.named_children:
        if module is not None and child.id == module.id:
            continue
        if child.type == "aliased_import":
            found.append((_text(child.child_by_field_name("alias")), prefix + _text(child.child_by_field_name("name"))))
        elif child.type == "dotted_name":
            name = _text(child)
            found.append((name if module is not None else name.split(".")[0], prefix + name))
        elif child.type == "wildcard_import":
            found.append(("*", prefix + "*"))
    return found


def same_module_off_platforms(before, after, absent: set[str],
                              helpers: tuple[dict[str, str] | None, dict[str, str] | None] = (None, None)) -> bool:
    """True when two Python modules' programs outside definitions differ, and differ only in what tests of
    platforms in ``absent`` select (``module_platform_tokens``): every module-level binding and import
    has the value it had on the port's platforms."""
    if before is None or after is None or before.has_error or after.has_error or not absent:
        return False
    old_program, new_program = _outside_definitions(before), _outside_definitions(after)
    if old_program == new_program:
        return False  # the same statements outside definitions, to the byte: nothing of the module's own changed
    changed = (Counter(old_program) - Counter(new_program)) + (Counter(new_program) - Counter(old_program))
    if not any(text.startswith((b"import ", b"from ")) for text in changed):
        words = [w for names in PLATFORMS.values() for w in names] + [_DEFAULT_DEVICE, _DEFAULT_VENDOR] \
            + [name for side in helpers for name in (side or {})]
        mentions = re.compile(rb"(?i)" + b"|".join(re.escape(w.encode()) for w in words))
        if not any(mentions.search(text) for text in changed):
            return False  # no changed statement tests a platform: no fold can make the two programs equal
    if module_platform_tokens(before, set()) == module_platform_tokens(after, set()):
        return False  # the same program without reading any platform test: not this rule's to say
    test_only = test_only_names(before, absent, helpers[0]) | test_only_names(after, absent, helpers[1])
    return module_platform_tokens(before, absent, helpers[0], test_only) \
        == module_platform_tokens(after, absent, helpers[1], test_only)


def _outside_definitions(root) -> list[bytes]:
    """A module's statements outside its definitions as written (each definition as its name), comments left
    out: equal lists are the same module-level program."""
    found = []
    for statement in root.named_children:
        if statement.type == "comment":
            continue
        if statement.type in _DEFINITION_TYPES:
            inner = statement.child_by_field_name("definition") if statement.type == "decorated_definition" \
                else statement
            name = inner.child_by_field_name("name") if inner is not None else None
            found.append(b"def " + (name.text if name is not None else b"?"))
        else:
            found.append(statement.text)
    return found


def decided_module_platforms(root, absent: set[str], helpers: dict[str, str] | None = None) -> set[str]:
    """The platforms of ``absent`` whose tests decide a branch of the module outside its definitions."""
    found: set[str] = set()
    for statement in root.named_children:
        if statement.type not in _DEFINITION_TYPES:
            found |= decided_platforms(statement, absent, helpers)
    return found


def same_off_platforms(before, after, absent: set[str],
                       helpers: tuple[dict[str, str] | None, dict[str, str] | None] = (None, None)) -> bool:
    """True when two Python definition nodes differ, and differ only in what tests of platforms in ``absent``
    select (see the module); ``helpers``: each side's ``platform_helpers``."""
    if before is None or after is None or before.has_error or after.has_error or not absent:
        return False
    if comment_free_tokens(before) == comment_free_tokens(after):
        return False
    return platform_tokens(before, absent, helpers[0]) == platform_tokens(after, absent, helpers[1])


def decided_platforms(node, absent: set[str], helpers: dict[str, str] | None = None) -> set[str]:
    """The platforms of ``absent`` whose tests decide a branch of ``node``."""
    found: set[str] = set()
    for current in _walk(node):
        condition = current.child_by_field_name("condition") if current.type == "if_statement" else (
            current.named_children[1] if current.type == "conditional_expression"
            and len(current.named_children) == 3 else None)
        if condition is not None:
            _platform_test(condition, absent, helpers, found)
    return found


# --- C/C++: declared not-carried flags are off --------------------------------------


def _flag_value(node, off: set[str]) -> bool | None:
    """The value of a C/C++ boolean expression with every name in ``off`` (normalised) false, or None."""

    def leaf(node) -> bool | None:
        kind = node.type
        if kind in ("identifier", "type_identifier"):
            return False if normalise_name(_text(node)) in off else None
        if kind == "type_descriptor" and node.named_child_count == 1:
            return _three_valued(node.named_children[0], leaf)
        if kind in ("true", "false"):
            return kind == "true"
        return None

    return _three_valued(node, leaf)


def flags_off_tokens(node, off: set[str]) -> list[str]:
    """A C/C++ definition's tokens with each boolean expression the names in ``off`` decide folded (see the
    module); a declaration of such a name reads as ``false`` on both sides alike."""
    def expand(current):
        if current.type not in ("identifier", "type_identifier", "type_descriptor", "parenthesized_expression",
                                "unary_expression", "binary_expression"):
            return None
        decided = _flag_value(current, off)
        if decided is not None:
            return ["true" if decided else "false"]
        if current.type == "binary_expression":
            operator = _text(current.child_by_field_name("operator"))
            left, right = current.child_by_field_name("left"), current.child_by_field_name("right")
            neutral = True if operator == "&&" else (False if operator == "||" else None)
            if neutral is not None and _flag_value(left, off) is neutral:
                return [right]
            if neutral is not None and _flag_value(right, off) is neutral:
                return [left]
        return None
    return comment_free_tokens(node, expand=expand)


def same_with_flags_off(before, after, off: set[str]) -> bool:
    """True when two C/C++ definition nodes differ, and differ only in what the declared-off flags decide."""
    if before is None or after is None or before.has_error or after.has_error or not off:
        return False
    if comment_free_tokens(before) == comment_free_tokens(after):
        return False
    return flags_off_tokens(before, off) == flags_off_tokens(after, off)


# --- C/C++: branches the declared-off parameters decide, and what only they read -----------


_NULL_WORDS = ("nullptr", "NULL")

_PURE_MATH = frozenset({
    "fmaxf", "fminf", "fabsf", "fmax", "fmin", "fabs", "max", "min", "abs", "sqrtf", "sqrt", "rsqrtf", "expf",
    "exp", "logf", "log", "floorf", "ceilf", "truncf", "roundf", "__expf", "__logf", "__fdividef",
})
"""Functions of the C math library (and CUDA's fast forms) that read only their arguments and write nothing."""

_ASSUMPTIONS = frozenset({"__builtin_assume", "assert"})
"""Calls that only state a fact about their argument: no value the definition computes depends on them."""


def _is_null(node) -> bool:
    return node is not None and (node.type == "null" or _text(node) in _NULL_WORDS
                                 or (node.type == "number_literal" and _text(node) == "0"))


def _off_value(node, off: set[str], known: dict[str, bool], counted: list | None = None,
               lacked: tuple[frozenset, set] | None = None) -> bool | None:
    """The value of a C/C++ condition with every parameter in ``off`` (normalised) absent: read as false, and
    as a null pointer in a null test (``p != nullptr`` false, ``p == nullptr`` true); a local in ``known`` is its
    value. ``!``, ``&&``, ``||`` and parentheses are evaluated three-valued; None when it is not decided. A
    count compared with a literal is decided where none and one agree (``_off_count``); ``counted`` (a list)
    then records the count's name. ``lacked`` (rule ``lacked-member``: the normalised members the port lacks,
    and the locals known non-negative) also reads ``P.m``/``P->m`` for such a member as absent in a null test,
    and a non-negative local compared with ``0`` (``i < 0`` false, ``i >= 0`` true)."""
    if node is None:
        return None
    kind = node.type
    if kind == "condition_clause":
        return _off_value(node.child_by_field_name("value"), off, known, counted, lacked)
    if kind == "parenthesized_expression" and node.named_child_count == 1:
        return _off_value(node.named_children[0], off, known, counted, lacked)
    if kind == "unary_expression" and _text(node.child_by_field_name("operator") or node.children[0]) == "!":
        inner = _off_value(node.child_by_field_name("argument"), off, known, counted, lacked)
        return None if inner is None else not inner
    if kind == "binary_expression":
        operator = _text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if operator in ("==", "!="):
            for name, other in ((left, right), (right, left)):
                if name is not None and name.type == "identifier" and _text(name) not in known \
                        and normalise_name(_text(name)) in off and _is_null(other):
                    return operator == "=="
                if lacked is not None and _lacked_member(name, lacked[0]) and other is not None \
                        and (other.type == "null" or _text(other) in _NULL_WORDS):  # a pointer's test, not a count's
                    return operator == "=="
            return None
        if lacked is not None and operator in _COUNT_SIDES:
            sign = _non_negative_test(left, operator, right, lacked[1])
            if sign is not None:
                return sign
        if operator in _COUNT_SIDES:
            return _off_count(left, operator, right, off, known, counted)
        a, b = _off_value(left, off, known, counted, lacked), _off_value(right, off, known, counted, lacked)
        if operator == "&&":
            return False if a is False or b is False else (True if a and b else None)
        if operator == "||":
            return True if a is True or b is True else (False if a is False and b is False else None)
        return None
    if kind == "identifier":
        if _text(node) in known:
            return known[_text(node)]
        return False if normalise_name(_text(node)) in off else None
    if kind in ("true", "false"):
        return kind == "true"
    return None


# A count compared with a literal, written with the count on the left: the operator, mirrored when on the right.
_COUNT_SIDES = {">": "<", "<": ">", ">=": "<=", "<=": ">="}


def _non_negative_value(value, off: set[str], known: dict[str, bool], lacked) -> bool:
    """Rule ``lacked-member``: whether a local's initial ``value`` is a grid or thread index, a local already
    known non-negative, ``0``, or (in parentheses) a conditional expression whose condition ``_off_value``
    decides and whose branch taken is one of those."""
    while value is not None and value.type == "parenthesized_expression" and value.named_child_count == 1:
        value = value.named_children[0]
    if value is None:
        return False
    if value.type == "conditional_expression":
        decided = _off_value(value.child_by_field_name("condition"), off, known, lacked=lacked)
        if decided is None:
            return False
        branch = value.child_by_field_name("consequence" if decided else "alternative")
        return branch is not None and branch.type != "conditional_expression" \
            and _non_negative_value(branch, off, known, lacked)
    if value.type == "identifier":
        return _text(value) in lacked[1]
    if value.type == "number_literal":
        return _text(value) == "0"
    return _grid_index(value)


def struct_members(node) -> dict[str, str]:
    """Rule ``lacked-member``: the members a C/C++ definition reads through one of its own parameters,
    ``P.m`` or ``P->m``: normalised name -> name as written."""
    declared = cpp_parameter_declarations(node) if node is not None else None
    parameters = {_text(i) for i in map(_cpp_parameter_identifier, declared or ()) if i is not None}
    found: dict[str, str] = {}
    for current in _walk(node):
        read = _member_read(current)
        if read is not None and read[0] in parameters and current.child_by_field_name("field").type == \
                "field_identifier":
            found.setdefault(normalise_name(read[1]), read[1])
    return found


def _member_read(node) -> tuple[str, str] | None:
    """``(P, m)`` for a ``P.m`` or ``P->m`` of a plain name ``P``; None for any other node."""
    if node is None or node.type != "field_expression":
        return None
    argument, field = node.child_by_field_name("argument"), node.child_by_field_name("field")
    if argument is None or argument.type != "identifier" or field is None:
        return None
    return _text(argument), _text(field)


def _lacked_member(node, members: frozenset) -> bool:
    """Rule ``lacked-member``: whether ``node`` reads ``P.m`` or ``P->m`` of a plain name ``P`` for a member
    ``m`` whose normalised name is in ``members``."""
    read = _member_read(node)
    return read is not None and normalise_name(read[1]) in members


# Types wide enough to hold any grid or thread index unchanged (an index is below 2**31).
_INDEX_TYPES = frozenset({"int", "unsigned", "long", "int32_t", "uint32_t", "int64_t", "uint64_t",
                          "size_t", "auto"})

# The built-in grid and thread coordinates of a CUDA/HIP kernel: an index each, never negative.
_GRID_INDEXES = frozenset({"blockIdx", "threadIdx"})


def _grid_index(node) -> bool:
    """Whether ``node`` is ``blockIdx.x`` (``y``, ``z``) or ``threadIdx.x`` (...): a non-negative index."""
    return node is not None and node.type == "field_expression" \
        and _text(node.child_by_field_name("argument") or node) in _GRID_INDEXES \
        and _text(node.child_by_field_name("field") or node) in ("x", "y", "z")


def _non_negative_test(left, operator: str, right, non_negative: set[str]) -> bool | None:
    """Rule ``lacked-member``: ``i < 0`` (false) or ``i >= 0`` (true), either way round, for a local ``i``
    in ``non_negative``; None for any other comparison."""
    for name, other, op in ((left, right, operator), (right, left, _COUNT_SIDES[operator])):
        if name is not None and other is not None and name.type == "identifier" and _text(name) in non_negative \
                and other.type == "number_literal" and _text(other) == "0" and op in ("<", ">="):
            return op == ">="
    return None


def _off_count(left, operator: str, right, off: set[str], known: dict[str, bool], counted: list | None) -> bool | None:
    """Rule ``declared-count-off``: ``COUNT OP LITERAL`` (either way round) for a parameter in ``off``, a
    non-negative integer literal, decided when the count's two readings as absent, none (0) and one (nothing
    to split), give the same answer (``n > 1`` false, ``n <= 1`` true, ``n > 0`` not decided); None otherwise."""
    for name, other, op in ((left, right, operator), (right, left, _COUNT_SIDES[operator])):
        if name is None or other is None or name.type != "identifier" or _text(name) in known \
                or normalise_name(_text(name)) not in off or other.type != "number_literal":
            continue
        literal = _text(other).rstrip("uUlL")
        if not literal.isdigit():
            return None
        bound = int(literal)
        answers = {{">": v > bound, "<": v < bound, ">=": v >= bound, "<=": v <= bound}[op] for v in (0, 1)}
        if len(answers) != 1:
            return None
        if counted is not None:
            counted.append(_text(name))
        return answers.pop()
    return None


def _assigned_names(node) -> Counter:
    """How often each plain name is assigned or stepped (``x = …``, ``x += …``, ``++x``) under ``node``."""
    return Counter(_text(target) for target in assignment_targets(node) if target.type == "identifier")


def _enclosing_statement(node, root):
    current = node.parent
    while current is not None and current.id != root.id:
        if current.type in ("expression_statement", "declaration"):
            return current
        current = current.parent
    return None


def _only_pure_calls(node) -> bool:
    for current in _walk(node):
        if current.type == "call_expression":
            function = current.child_by_field_name("function")
            if function is None or function.type != "identifier" or _text(function) not in _PURE_MATH:
                return False
        if current.type in ("assignment_expression", "update_expression"):
            return False
    return True


_TYPE_TEST = re.compile(r"^\(*(?:::)?(?:std::)?is_same(?:<([^<>,]+),([^<>]+)>::value|_v<([^<>,]+),([^<>]+)>)\)*$")


def _off_types(node, off: set[str]) -> dict[str, set[str]]:
    """The template type parameters of the C/C++ definition ``node`` that type only parameters in ``off``
    (``template <typename Param> … const Param p`` with ``p`` declared not carried), each with those
    parameters' names; a type parameter that also types a parameter the port carries is not one."""
    if node.type != "template_declaration":
        return {}
    parameters = node.child_by_field_name("parameters")
    typenames = {_text(c.named_children[0]) for c in (parameters.named_children if parameters else [])
                 if c.type == "type_parameter_declaration" and c.named_child_count == 1}
    declarations = cpp_parameter_declarations(node) or []
    typed: dict[str, set[str]] = {}
    carried: set[str] = set()
    for declaration in declarations:
        kind = declaration.child_by_field_name("type")
        name = _cpp_parameter_identifier(declaration)
        if kind is None or _text(kind) not in typenames:
            continue
        if name is not None and normalise_name(_text(name)) in off:
            typed.setdefault(_text(kind), set()).add(_text(name))
        else:
            carried.add(_text(kind))
    return {kind: names for kind, names in typed.items() if kind not in carried}


def _type_keyed_off(statement, types: dict[str, set[str]]) -> bool:
    """True for an ``if constexpr`` with no ``else`` whose condition is ``std::is_same<T, X>::value`` (or
    ``std::is_same_v<T, X>``, either order) for a type ``T`` of ``types`` (``_off_types``) and whose branch
    reads a member of a parameter so typed (``p.limit``): the branch is for a parameter with members, one the
    port does not carry, so it is not the port's path."""
    if not types or statement.child_by_field_name("alternative") is not None \
            or not any(c.type == "constexpr" or _text(c) == "constexpr" for c in statement.children[:3]):
        return False
    condition = statement.child_by_field_name("condition")
    match = _TYPE_TEST.match(re.sub(r"\s+", "", _text(condition)).removeprefix("(").removesuffix(")")) \
        if condition is not None else None
    if match is None:
        return False
    pair = [g for g in match.groups() if g is not None]
    keyed = [t for t in pair if t in types]
    if len(keyed) != 1 or pair[0] == pair[1]:
        return False
    names = types[keyed[0]]
    consequence = statement.child_by_field_name("consequence")
    return any(current.type == "field_expression" and current.child_by_field_name("argument") is not None
               and current.child_by_field_name("argument").type == "identifier"
               and _text(current.child_by_field_name("argument")) in names
               for current in _walk(consequence))


def declared_off_expander(node, off: set[str], lacked_members: frozenset = frozenset()):
    """Rule ``declared-branch-off``: an ``expand`` for ``comment_free_tokens`` over a C/C++ definition that
    reads each parameter in ``off`` as absent (false; a null pointer in a null test): a local declared once
    from a condition so decided (``const bool has_p = (p != nullptr);``, never assigned again) is that value
    and its declaration is left out; an ``if`` (``if constexpr`` too) or a conditional expression whose
    condition is decided is its branch taken; and a statement that only writes a local nothing else still
    reads (``m = fmaxf(fabsf(v), m);``, pure math on the right) or only assumes a fact about one
    (``__builtin_assume(m >= 0);``) is left out, and so is an ``if`` with no ``else``, a test without
    effects, around nothing left. None when nothing is decided.

    Rule ``lacked-member``: ``lacked_members`` (normalised) are members of a parameters struct the port
    lacks, read as absent in a null test (``P.m == nullptr`` true) like ``off``; and a local declared once,
    never assigned, from a grid or thread index (``blockIdx.x``) or from a conditional expression so decided
    whose branch taken is such a local or ``0``, is non-negative (``i < 0`` false, ``i >= 0`` true)."""
    body = node
    known: dict[str, bool] = {}
    counted: list[str] = []
    assigned = _assigned_names(body)
    declarations: set[int] = set()
    non_negative: set[str] = set()
    lacked = (frozenset(lacked_members), non_negative) if lacked_members else None
    declared_names = Counter(_text(d.child_by_field_name("declarator")) for d in _walk(body)
                             if d.type == "init_declarator" and d.child_by_field_name("declarator") is not None)
    for _ in range(3):
        grew = False
        for current in _walk(body):
            if current.type != "declaration":
                continue
            declarators = [c for c in current.named_children if c.type == "init_declarator"]
            if len(declarators) != 1:
                continue
            name, value = declarators[0].child_by_field_name("declarator"), declarators[0].child_by_field_name("value")
            if name is None or name.type != "identifier" or value is None or assigned[_text(name)] \
                    or _text(name) in known:
                continue
            decided = _off_value(value, off, known, lacked=lacked)
            if decided is not None:
                known[_text(name)] = decided
                declarations.add(current.id)
                grew = True
            elif lacked is not None and _text(name) not in non_negative and declared_names[_text(name)] == 1 \
                    and _text(current.child_by_field_name("type") or current) in _INDEX_TYPES \
                    and _non_negative_value(value, off, known, lacked):
                non_negative.add(_text(name))
                grew = True
        if not grew:
            break
    pruned: set[int] = set()  # the roots of the branches not taken
    types = _off_types(node, off)

    def taken(current):
        """The nodes standing for a decided ``if`` or conditional expression, or None."""
        if current.type == "if_statement":
            if _type_keyed_off(current, types):
                return []
            decided = _off_value(current.child_by_field_name("condition"), off, known, counted, lacked)
            if decided is None:
                return None
            alternative = current.child_by_field_name("alternative")
            if decided:
                return [current.child_by_field_name("consequence")]
            if alternative is None:
                return []
            return [c for c in alternative.named_children if c.type != "comment"]
        if current.type == "conditional_expression":
            decided = _off_value(current.child_by_field_name("condition"), off, known, counted, lacked)
            if decided is None:
                return None
            return [current.child_by_field_name("consequence" if decided else "alternative")]
        return None

    def mark(current):
        kept = taken(current)
        if kept is None:
            for child in current.children:
                mark(child)
            return
        ids = {k.id for k in kept if k is not None}
        for child in current.children:
            if child.id in ids:
                mark(child)
            elif child.type == "else_clause":
                for inner in child.children:
                    if inner.id in ids:
                        mark(inner)
                    else:
                        pruned.add(inner.id)
            else:
                pruned.add(child.id)

    mark(body)

    def live(current) -> bool:
        while current is not None:
            if current.id in pruned or current.id in declarations:
                return False
            current = current.parent
        return True

    dead: set[int] = set()
    reads: dict[str, list] = {}
    for current in _walk(body):
        if current.type == "identifier" and live(current):
            reads.setdefault(_text(current), []).append(current)
    for name in local_names(node, "cpp"):
        statements = []
        for use in reads.get(name, []):
            statement = _enclosing_statement(use, body)
            if statement is None:
                statements = None
                break
            statements.append(statement)
        if not statements:
            continue
        writes = []
        for statement in statements:
            if statement.type == "declaration":
                if any(c.type == "init_declarator" and _text(c.child_by_field_name("declarator") or c) == name
                       and _only_pure_calls(c) for c in statement.named_children):
                    continue
                writes = None
                break
            expression = statement.named_children[0] if statement.named_child_count == 1 else None
            if expression is not None and expression.type == "assignment_expression" \
                    and expression.child_by_field_name("left") is not None \
                    and expression.child_by_field_name("left").type == "identifier" \
                    and _text(expression.child_by_field_name("left")) == name \
                    and _only_pure_calls(expression.child_by_field_name("right")):
                writes.append(statement)
                continue
            if expression is not None and expression.type == "call_expression" \
                    and _text(expression.child_by_field_name("function")) in _ASSUMPTIONS \
                    and _only_pure_calls(expression.child_by_field_name("arguments")):
                writes.append(statement)
                continue
            writes = None
            break
        if writes:
            dead |= {w.id for w in writes}
    if not known and not pruned and not dead:
        return None
    flat = _flattened_blocks(body, taken, live) if counted else set()
    merged = _merged_declarations(body, flat, live) if counted else {}
    stores = {store.id: declaration for declaration, store in merged.values()}

    def expand(current):
        if current.id in declarations or current.id in dead or current.id in merged:
            return []
        if current.id in stores:
            declaration = stores[current.id]
            kind = declaration.child_by_field_name("type")
            prefix = [c for c in declaration.children if c.end_byte <= kind.end_byte and c.type != "comment"]
            return prefix + [c for c in current.children]
        kept = taken(current)
        if kept is not None:
            out = []
            for k in kept:
                if k is not None and k.id in flat:
                    out.extend(k.children[1:-1])
                elif k is not None:
                    out.append(k)
            return out
        if current.type == "if_statement" and current.child_by_field_name("alternative") is None \
                and _only_pure_calls(current.child_by_field_name("condition")):
            consequence = current.child_by_field_name("consequence")
            if consequence is not None and comment_free_tokens(consequence, expand=expand) in (["{", "}"], [";"]):
                return []  # nothing left to run under it: a test with no effect
        if current.type == "identifier" and _text(current) in known:
            return ["true" if known[_text(current)] else "false"]
        return None

    expand.counted = sorted(set(counted))  # type: ignore[attr-defined]
    return expand


def _flattened_blocks(body, taken, live) -> set[int]:
    """Rule ``declared-count-off``: the ids of the blocks (``{ … }``) that are the whole branch a decided
    ``if`` takes, where no name declared directly in the block is named anywhere outside it: its statements
    then mean what they meant inside it."""
    flat: set[int] = set()
    for current in _walk(body):
        if current.type != "if_statement" or not live(current):
            continue
        for kept in taken(current) or []:
            if kept is None or kept.type != "compound_statement":
                continue
            names = {_text(d) for child in kept.named_children if child.type == "declaration"
                     for d in _declared_identifiers(child)}
            if any(n.type == "identifier" and _text(n) in names
                   and not (kept.start_byte <= n.start_byte and n.end_byte <= kept.end_byte) for n in _walk(body)):
                continue
            flat.add(kept.id)
    return flat


def _declared_identifiers(declaration) -> list:
    found = []
    kind = declaration.child_by_field_name("type")
    for child in declaration.named_children:
        target = child.child_by_field_name("declarator") if child.type == "init_declarator" else child
        if target is not None and target.type == "identifier" and (kind is None or child.id != kind.id):
            found.append(target)
    return found


def _merged_declarations(body, flat: set[int], live) -> dict:
    """Rule ``declared-count-off``: declaration id -> (declaration, store) for each live local declared with no
    value (``int at;``, one name) whose first live mention after it is a plain store ``at = value;`` (the value
    not naming it) in the same block, or in a block ``flat`` lays into it: the local is then declared with that
    value where it is stored."""
    merged: dict = {}
    mentions: dict[str, list] = {}
    for current in _walk(body):
        if current.type == "identifier" and live(current):
            mentions.setdefault(_text(current), []).append(current)
    for current in _walk(body):
        if current.type != "declaration" or not live(current) or current.parent is None \
                or current.parent.type != "compound_statement":
            continue
        kind = current.child_by_field_name("type")
        declarators = [c for c in current.named_children if kind is None or c.id != kind.id]
        if len(declarators) != 1 or declarators[0].type != "identifier" or kind is None:
            continue
        name = _text(declarators[0])
        later = sorted((m for m in mentions.get(name, []) if m.start_byte > current.end_byte), key=lambda m: m.start_byte)
        if not later:
            continue
        first = later[0]
        assignment = first.parent
        if assignment is None or assignment.type != "assignment_expression" \
                or assignment.child_by_field_name("left") is None or assignment.child_by_field_name("left").id != first.id \
                or _text(assignment.child_by_field_name("operator") or assignment.children[1]) != "=":
            continue
        statement = assignment.parent
        if statement is None or statement.type != "expression_statement" or statement.named_child_count != 1:
            continue
        right = assignment.child_by_field_name("right")
        if right is None or any(n.type == "identifier" and _text(n) == name for n in _walk(right)):
            continue
        block = statement.parent
        while block is not None and block.id != current.parent.id and block.id in flat:
            up = block.parent  # the flattened block's ``else``, the ``if`` that took it, then the block around that
            if up is not None and up.type == "else_clause":
                up = up.parent
            block = up.parent if up is not None and up.type == "if_statement" else None
        if block is None or block.id != current.parent.id:
            continue
        merged[current.id] = (current, statement)
    return merged


# --- Python: values stored only for what the port does not carry --------------------


def _first_parameter(function) -> str | None:
    parameters = function.child_by_field_name("parameters") if function is not None else None
    for parameter in parameters.named_children if parameters is not None else ():
        if parameter.type == "identifier":
            return _text(parameter)
        return None
    return None


def _stores(node) -> dict[str, list]:
    """``NAME`` -> the statements of ``node`` that are only ``FIRST.NAME = value`` (FIRST its first parameter)."""
    function = _function(node)
    owner = _first_parameter(function)
    found: dict[str, list] = {}
    if owner is None:
        return found
    stack = [function.child_by_field_name("body")] if function.child_by_field_name("body") is not None else []
    while stack:
        current = stack.pop()
        if current.type == "expression_statement" and current.named_child_count == 1 \
                and current.named_children[0].type == "assignment":
            left = current.named_children[0].child_by_field_name("left")
            if left is not None and left.type == "attribute" and _text(left.child_by_field_name("object")) == owner:
                found.setdefault(_text(left.child_by_field_name("attribute")), []).append(current)
                continue
        if current.type in ("function_definition", "class_definition", "lambda"):
            continue
        stack.extend(current.named_children)
    return found


def stored_attributes(node) -> set[str]:
    """The attribute names ``node`` stores on its first parameter and never reads itself."""
    stores = _stores(node)
    statements = {s.id for found in stores.values() for s in found}
    read: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if current.id in statements:
            value = current.named_children[0].child_by_field_name("right")
            stack.extend([value] if value is not None else [])
            continue
        if current.type == "attribute":
            read.add(_text(current.child_by_field_name("attribute")))
        stack.extend(current.named_children)
    return set(stores) - read


def stored_only_parameters(before, after, names: set[str]) -> set[str]:
    """The defaulted parameters ``after`` adds to ``before`` whose every use in its body is a value stored by
    one of its stores of ``names`` (such a parameter only carries a value to the stores' readers)."""
    added = {n for n, default in parameter_defaults(after).items() if default is not _OFF} \
        - set(parameter_defaults(before))
    if not added:
        return set()
    function = _function(after)
    dropped = {s.id for name, found in _stores(after).items() if name in names for s in found}
    used: set[str] = set()
    stack = [function.child_by_field_name("body")] if function.child_by_field_name("body") is not None else []
    while stack:
        current = stack.pop()
        if current.id in dropped:
            continue
        if current.type == "identifier":
            used.add(normalise_name(_text(current)))
        stack.extend(current.named_children)
    return added - used


def same_without_stores(before, after, names: set[str], parameters: set[str] = frozenset()) -> bool:
    """True when two Python definition nodes differ, and are the same once their stores of ``names`` on the
    first parameter, and the ``parameters`` (normalised) that only feed them, are left out."""
    if before is None or after is None or before.has_error or after.has_error or not names:
        return False
    if comment_free_tokens(before) == comment_free_tokens(after):
        return False

    def tokens(node):
        dropped = {s.id for name, found in _stores(node).items() if name in names for s in found}

        def expand(current):
            if current.id in dropped:
                return []
            if current.parent is not None and current.parent.type == "parameters" and parameters:
                name = current if current.type == "identifier" else current.child_by_field_name("name")
                if name is not None and normalise_name(_text(name)) in parameters:
                    return []
            return None
        return comment_free_tokens(node, expand=expand)
    return tokens(before) == tokens(after)


def _decorators(node) -> tuple[list, object]:
    """(decorator nodes, the function node) of a Python definition node."""
    if node.type == "decorated_definition":
        return [c for c in node.named_children if c.type == "decorator"], node.child_by_field_name("definition")
    return [], node


def _decorator_called(decorator) -> str | None:
    """The last part of the name a decorator names or calls (``torch.compiler.disable`` -> ``disable``)."""
    expression = decorator.named_children[0] if decorator.named_children else None
    if expression is not None and expression.type == "call":
        expression = expression.child_by_field_name("function")
    if expression is None or expression.type not in ("identifier", "attribute"):
        return None
    return expression.text.decode("utf-8", errors="replace").split(".")[-1]


def dropped_decorators(before, after, port) -> tuple[list[str], object, object] | None:
    """Rule ``port-lacks-dropped-decorator``: (the dropped decorators' names, the old and new function nodes
    without decorators) when ``after``'s decorators are ``before``'s in order less some, each naming a
    decorator ``port`` (the in-tree definition's node) does not carry; else None."""
    old, old_function = _decorators(before)
    new, new_function = _decorators(after)
    if not old or old_function is None or new_function is None or port is None:
        return None
    carried = {_decorator_called(d) for d in _decorators(port)[0]}
    texts = [" ".join(comment_free_tokens(d)) for d in new]
    kept, dropped = 0, []
    for decorator in old:
        if kept < len(texts) and " ".join(comment_free_tokens(decorator)) == texts[kept]:
            kept += 1
            continue
        name = _decorator_called(decorator)
        if name is None or name in carried:
            return None
        dropped.append(name)
    if kept != len(texts) or not dropped:
        return None
    return dropped, old_function, new_function


class BranchRules:
    """The branch rules, as methods of the verdict table (``verdicts.SymbolClassifier``)."""

    def _default_build_launches(self, symbol: TouchedSymbol, old: Signature, new: Signature, port_file: str | None):
        """``old`` and ``new`` less the C/C++ launches that lie in a preprocessor branch the default build does
        not compile (``default-build-launch``, ``other_build_lines``), when no file of the tree sets a macro
        those branches test and the port's own file never names one; and the evidence saying what was left
        out (empty when nothing was)."""
        if language_for_path(symbol.path) != "cpp" or symbol.change != "modified":
            return old, new, []
        tables = self._side_tables(symbol)
        if any(t is None or t.tree is None or t.source is None for t in tables):
            return old, new, []
        defined = defined_macros(*(t.source for t in tables))
        own = self.index.source(port_file) if port_file else None
        kept, left_out = [], []
        for signature, table in zip((old, new), tables):
            lines = other_build_lines(table.tree.root_node, defined)
            dropped = [launch for launch in signature.launches if launch.line in lines]
            names = set().union(*(lines[launch.line] for launch in dropped)) if dropped else set()
            if dropped and (set_in_tree(names, self.index.tree_sources()) or (own and any(
                    re.search(rb"\b" + re.escape(name.encode()) + rb"\b", own) for name in names))):
                dropped = []
            kept.append(replace(signature, launches=[l for l in signature.launches if l not in dropped])
                        if dropped else signature)
            left_out += [(signature, launch, names) for launch in dropped]
        evidence = [Evidence(kind=Kind.NOT_CARRIED, side="upstream-old" if signature is old else "upstream-new",
                             path=signature.path, line=launch.line, quote=launch.quote, symbol=signature.name,
                             subject=sorted(names)[0],
                             message=f"launch of {launch.kernel_normalised} left out: it lies in a branch on "
                                     f"{', '.join(sorted(names))} the default build does not compile")
                    for signature, launch, names in left_out]
        return kept[0], kept[1], evidence

    def _absent_platforms(self, symbol: TouchedSymbol, anchor) -> list[str]:
        """The platforms (``PLATFORMS``) the port's tree never names whose tests decide every difference of the
        definition (``absent-platform``); else empty. A port whose anchor pins an upstream commit is a copy
        of upstream's code, which runs where upstream runs: its tree's silence says nothing."""
        if anchor.pin:
            return []
        sides = self._modified_sides(symbol, "python")
        if sides is None:
            return []
        before, after = sides
        absent = self._platforms_absent()
        tables = self._side_tables(symbol)
        helpers = tuple(platform_helpers(t.tree.root_node, absent) if t is not None and t.tree is not None else {}
                        for t in tables)
        if not same_off_platforms(before.node, after.node, absent, helpers):
            return []
        return sorted(decided_platforms(before.node, absent, helpers[0])
                      | decided_platforms(after.node, absent, helpers[1]))

    def _platforms_absent(self) -> set[str]:
        """The platforms of ``PLATFORMS`` no code of the port's tree names (``named_platforms``)."""
        if getattr(self, "_tree_platforms", None) is None:
            sources = self.index.tree_sources()
            self._tree_platforms = set(PLATFORMS) if sources is None else named_platforms(sources)
        return set(PLATFORMS) - self._tree_platforms

    def _module_absent_platforms(self, symbol: TouchedSymbol) -> list[str]:
        """For the lines of a Python module outside its definitions: the platforms the port's tree never names
        whose tests decide every difference of that module-level program (``absent-platform``: each binding
        and import keeps the value it had on the port's platforms, so nothing a ported definition reads from
        it changed); else empty. A tree with a port pinned to an upstream commit holds copies of upstream's
        code, which run where upstream runs: the rule decides nothing for it."""
        if language_for_path(symbol.path) != "python" or symbol.change != "modified" \
                or any(a.pin for a in self.index.anchors if a.upstream == self.upstream):
            return []
        # A property of the file's two versions, asked once per touched symbol of it: answered once.
        key = (symbol.old_blob, symbol.new_blob, symbol.old_path or symbol.path, symbol.path)
        answers = self.__dict__.setdefault("_module_platform_answers", {})
        if key not in answers:
            answers[key] = self._module_absent_platforms_of(symbol)
        return list(answers[key])

    def _module_absent_platforms_of(self, symbol: TouchedSymbol) -> list[str]:
        """``_module_absent_platforms``, computed for the file of ``symbol``."""
        tables = self._side_tables(symbol)
        if any(t is None or t.tree is None for t in tables):
            return []
        absent = self._platforms_absent()
        words = [w for p in sorted(absent) for w in PLATFORMS[p]] + [_DEFAULT_DEVICE, _DEFAULT_VENDOR]
        mentions = re.compile(r"(?i)" + "|".join(re.escape(w) for w in words))
        if not absent or not any(t.source is not None and mentions.search(t.source.decode("utf-8", errors="replace"))
                                 for t in tables):
            return []  # no test of such a platform can decide anything here
        roots = tuple(t.tree.root_node for t in tables)
        helpers = tuple(platform_helpers(root, absent) for root in roots)
        if not same_module_off_platforms(*roots, absent, helpers):
            return []
        return sorted(decided_module_platforms(roots[0], absent, helpers[0])
                      | decided_module_platforms(roots[1], absent, helpers[1]))

    def _stores_for_not_carried(self, symbol: TouchedSymbol) -> tuple[list[str], list[str]] | None:
        """``(attributes, their readers)`` when the definition changed only statements storing attributes on its
        first parameter that only definitions declared not carried read (``not-carried-reader``); else None."""
        sides = self._modified_sides(symbol, "python")
        if sides is None:
            return None
        before, after = sides
        names = stored_attributes(before.node) | stored_attributes(after.node)
        if not names:
            return None
        readers: dict[str, set[str]] = {name: set() for name in names}
        for blob, path in ((symbol.old_blob, symbol.old_path or symbol.path), (symbol.new_blob, symbol.path)):
            table = self._table(blob, path)
            if table is None or table.fallback:
                return None
            for other in table.definitions:
                if other.qualified_name == symbol.qualified_name or other.node is None \
                        or symbol.qualified_name.startswith(other.qualified_name + "."):
                    continue  # itself, or a class around it (its methods are read one by one)
                words = set(re.findall(r"\.\s*([A-Za-z_]\w*)", other.node.text.decode("utf-8", errors="replace")))
                for name in names & words:
                    readers[name].add(other.qualified_name)
        paths = {symbol.path, symbol.old_path or symbol.path}
        kept = {name for name, found in readers.items() if all(
            any(not a.param for a in self.index.not_carried_for(self.upstream, paths, q.split(".")[-1], q))
            for q in found)}
        carried = stored_only_parameters(before.node, after.node, kept) if kept else set()
        if not kept or not same_without_stores(before.node, after.node, kept, carried):
            return None
        return sorted(kept), sorted(set().union(*(readers[n] for n in kept)))

    def _dropped_decorators(self, symbol: TouchedSymbol, definition) -> list[str]:
        """The names of the decorators ``port-lacks-dropped-decorator`` sets aside for ``symbol`` against the
        port at ``definition``; empty when none."""
        sides = self._modified_sides(symbol, "python")
        if sides is None or definition.language != "python":
            return []
        dropped = dropped_decorators(sides[0].node, sides[1].node, self._port_node(definition))
        return dropped[0] if dropped is not None else []

    def _lacked_branches(self, entry, symbol: TouchedSymbol, new: Signature, definition,
                         param_scope: set[str], anchor=None, new_options_too: bool = False) -> list[str]:
        """The parameters (as upstream writes them) that ``lacked-branch`` sets aside, when the definition
        is the same before and after for a port lacking them (``portq.classifier.rules.branches``); else
        empty. A parameter new in this commit that one of its launches passes is an input upstream now
        uses, not a default: the parameter rules judge it. A definition the port carries because the one
        its ``anchor`` names calls it (a body upstream extracted) takes its values from that call."""
        if definition.signature is None or definition.signature.language != "python":
            return []
        sides = self._modified_sides(symbol, "python")
        if sides is None:
            return []
        before_node, after_node = sides[0].node, sides[1].node
        tables = self._side_tables(symbol)
        if any(t is None or t.tree is None for t in tables):
            return []
        dropped = dropped_decorators(before_node, after_node, self._port_node(definition))
        if dropped is not None:  # ``port-lacks-dropped-decorator``: the dropped lines are in the port's form
            before_node, after_node = dropped[1], dropped[2]
        port_names = {p.normalised for p in definition.signature.params if p.normalised not in ("self", "ctx")}
        lacked = lacked_parameters(before_node, after_node, port_names, _scope_names(param_scope))
        if lacked is None and anchor is not None and anchor.matches_name(symbol.name, symbol.qualified_name):
            lacked = self._lacked_at_base(before_node, after_node, anchor,
                                          [p.normalised for p in definition.signature.params
                                           if p.normalised not in ("self", "ctx")], _scope_names(param_scope))
        added = set(parameter_defaults(after_node)) - set(parameter_defaults(before_node))
        if lacked and any(self._derivation(entry, symbol, new, name) is not None for name in added & set(lacked)):
            return []
        if lacked and not new_options_too and symbol.kind in HOST_KINDS and new_options(lacked, added):
            return []  # ``new-option``: an input callers can now pass that the port cannot accept
        if anchor is not None and (lacked is None or any(... in v for v in lacked.values())):
            lacked = self._lacked_through_anchor(symbol, tables, before_node, after_node, anchor,
                                                 [p.normalised for p in definition.signature.params
                                                  if p.normalised not in ("self", "ctx")],
                                                 _scope_names(param_scope)) or lacked
        if lacked and set(lacked) & set(_RECEIVERS):  # a receiver the port's definition has too is the port's
            port_node = self._port_node(definition)
            mine = set(parameter_defaults(port_node)) if port_node is not None else set()
            lacked = {name: values for name, values in lacked.items() if name not in mine or name not in _RECEIVERS}
        callees = self._callees(entry, symbol, tables, (before_node, after_node))
        if not lacked or not same_for_port_parameters(
                before_node, after_node, lacked, tuple(module_values(t.tree.root_node) for t in tables), callees):
            return []
        changed = {normalise_name(t) for t in set(comment_free_tokens(before_node)) ^ set(comment_free_tokens(after_node))}
        return sorted(lacked, key=lambda name: (name not in changed, name))

    def _lacked_through_anchor(self, symbol: TouchedSymbol, tables, before, after, anchor, port_names: list[str],
                               declared: set[str]) -> dict[str, tuple[object, object]] | None:
        """``lacked_parameters``'s answer for a definition that the upstream definition ``anchor`` names (another
        one, in the same file, with the same parameters on both sides) calls: see ``lacked_through_caller``."""
        if anchor.matches_name(symbol.name, symbol.qualified_name) or parameter_defaults(before).keys() \
                != parameter_defaults(after).keys():
            return None
        base_sha = getattr(self.context, "range_base", None)
        path = symbol.old_path or symbol.path
        base_table = self._table(f"{base_sha}:{path}", path) if base_sha else None
        at_base = [d for d in (base_table.definitions if base_table is not None and not base_table.fallback else ())
                   if d.node is not None and anchor.matches_name(d.name, d.qualified_name)]
        sides = []
        for table, callee in zip(tables, (before, after)):
            callers = [d for d in table.definitions
                       if d.node is not None and anchor.matches_name(d.name, d.qualified_name)]
            if len(callers) != 1:
                return None
            bound = bound_by_port(callers[0].node, port_names, declared,
                                  at_base[0].node if len(at_base) == 1 else None)
            sides.append((parameter_defaults(callers[0].node), None if bound is None else lacked_through_caller(
                callers[0].node, callee, symbol.name, bound, declared)))
        (old_caller, was), (new_caller, now) = sides
        if was is None or now is None or old_caller != new_caller or set(was) != set(now):
            return None  # the anchored definition's own parameters changed: the parameter rules judge it
        return {name: (was[name], now[name]) for name in was}


    def _launched_values(self, entry, symbol: TouchedSymbol, definition, param_scope: set[str], anchor) -> list[str]:
        """The parameters (as upstream writes them) that ``launched-value`` sets aside: those of a definition the
        port anchors with names of its own (bound by position as at the range's base, ``bound_by_port``) that
        the port lacks, with no default, each taking the value of the definition's one launch in its file
        (``_launch_value``); the definition the same before and after for those values
        (``same_for_port_parameters``). Else empty."""
        if anchor is None or definition.signature is None or definition.signature.language != "python":
            return []
        sides = self._modified_sides(symbol, "python", parsed=True)
        if sides is None:
            return []
        tables = self._side_tables(symbol)
        if any(t is None or t.tree is None or t.fallback for t in tables):
            return []
        before, after = sides
        if list(parameter_defaults(before.node)) != list(parameter_defaults(after.node)):
            return []  # the signature changed: the parameter rules judge it
        if any(len(_launches_of(t.tree.root_node, symbol.name)) > 1 for t in tables) \
                or all(d is not _OFF for d in parameter_defaults(before.node).values()):
            return []  # no one launch to read, or nothing without a default: nothing read at the base
        if any(not _launches_of(t.tree.root_node, symbol.name) for t in tables) and (
                symbol.kind != KIND_TRITON_KERNEL or not _tested_names(after.node) & {
                    n for n, d in parameter_defaults(after.node).items() if d is _OFF}):
            return []  # launched from elsewhere: read other modules only for a kernel that tests such a parameter
        commits = (entry.commit.parents[0] if entry.commit.parents else None, entry.commit.sha)
        declared = _scope_names(param_scope)
        port_names = [p.normalised for p in definition.signature.params if p.normalised not in ("self", "ctx")]
        base = self._at_base(anchor)
        values = []
        for table, side, path, commit in zip(tables, (before, after), (symbol.old_path or symbol.path, symbol.path),
                                             commits):
            bound = bound_since_base(side.node, port_names, declared, base)
            defaults = parameter_defaults(side.node)
            if bound is None or set(bound) >= set(defaults) - declared - {"self", "ctx", "cls"}:
                return []
            chosen: dict[str, object] = {}
            for name, default in defaults.items():
                if name in bound or name in ("self", "ctx", "cls"):
                    continue
                if name in declared:
                    chosen[name] = _OFF
                elif default is not _OFF:
                    chosen[name] = default
                else:
                    chosen[name] = self._launch_value(table, path, symbol.name, name, declared, commit)
                    if chosen[name] is not ... and not self._launched_alike(entry, path, side is after,
                                                                            symbol.name, name, chosen[name]):
                        chosen[name] = ...  # another file launches it with another value
            values.append(chosen)
        was, now = values
        if not any(was[n] is not ... and parameter_defaults(before.node)[n] is _OFF and n not in declared
                   for n in was):
            return []  # no value a launch gives: the other branch rules decide
        lacked = {name: (was[name], now[name]) for name in was}
        callees = self._callees(entry, symbol, tables, (before.node, after.node))
        if not same_for_port_parameters(before.node, after.node, lacked,
                                        tuple(module_values(t.tree.root_node) for t in tables), callees):
            return []
        changed = {normalise_name(t) for t in set(comment_free_tokens(before.node)) ^ set(comment_free_tokens(after.node))}
        decided = [n for n in was if was[n] is not ... and parameter_defaults(before.node)[n] is _OFF]
        return sorted(decided, key=lambda name: (name not in changed, name))

    def _callees(self, entry, symbol: TouchedSymbol, tables, nodes) -> tuple[dict, dict]:
        """For each side, bare name -> what a call of it in ``nodes`` (the symbol's two definitions) runs: a
        module-level definition of the same file (its node), or one a module-level import brings in from another
        file of the upstream, read at that side's commit through modules that only re-export it (``(node, that
        module's values)``)."""
        commits = (entry.commit.parents[0] if entry.commit.parents else None, entry.commit.sha)
        paths = (symbol.old_path or symbol.path, symbol.path)
        calls = [_calls_by_name(node) for node in nodes]
        found = []
        for table, node, commit, path in zip(tables, nodes, commits, paths):
            own: dict = {d.name: d.node for d in table.definitions if d.node is not None and d.qualified_name == d.name}
            bindings = import_bindings(table.tree.root_node) if commit is not None else {}
            for name in sorted(_called_names(node) - set(own)):
                if name not in bindings or calls[0].get(name) == calls[1].get(name):
                    continue  # another file is read only for a call this commit changes
                imported = self._imported_definition(entry, bindings[name].target, path, commit == commits[1])
                if imported is not None:
                    own[name] = imported
            found.append(own)
        return found[0], found[1]

    def _imported_definition(self, entry, target: str, importer: str, new_side: bool):
        """``(node, module values)`` of the module-level definition an import target of ``importer`` names, on
        one side of the commit, followed through modules that only re-export it; None where it cannot be read.
        Only files the commit changes are read (their blobs are read ahead with the commit's): another file
        leaves the call's arguments as they are."""
        blobs = {(c.new_path if new_side else c.old_path): (c.new_blob if new_side else c.old_blob)
                 for c in entry.owned_changes}

        def read_root(other: str):
            table = self._parsed_table(blobs.get(other), other)
            return table.tree.root_node if table is not None else None

        stem, _, name = reexport_target(target, importer, read_root).rpartition(":")
        if not stem:
            return None
        for candidate in (stem + ".py", stem + "/__init__.py"):
            root = read_root(candidate)
            if root is not None:
                definition = next((c for c in root.named_children if _function(c) is not None
                                   and _function(c).type == "function_definition"
                                   and _text(_function(c).child_by_field_name("name")) == name), None)
                return (definition, module_values(root)) if definition is not None else None
        return None

    def _lacked_at_base(self, before, after, anchor, port_names: list[str],
                        declared: set[str]) -> dict[str, tuple[object, object]] | None:
        """``lacked_parameters`` for the anchored definition itself, ported under names of its own: the port's
        inputs are the upstream parameters its positions bind at the scanned range's base (``bound_by_port``),
        the same on both sides; every other parameter is one it lacks. None where the base is not read or the
        positions bind nothing."""
        base = self._at_base(anchor)
        if base is None:
            return None
        bound = [bound_by_port(side, port_names, declared, base) for side in (before, after)]
        if bound[0] is None or bound[0] != bound[1] \
                or bound[0] >= set(parameter_defaults(before)) - declared - {"self", "ctx", "cls"}:
            return None
        return lacked_parameters(before, after, bound[0], declared)

    def _at_base(self, anchor):
        """The syntax node of the definition ``anchor`` names at the scanned range's base, or None."""
        base_sha = getattr(self.context, "range_base", None)
        table = self._table(f"{base_sha}:{anchor.path}", anchor.path) if base_sha else None
        found = [d for d in (table.definitions if table is not None and not table.fallback else ())
                 if d.node is not None and anchor.matches_name(d.name, d.qualified_name)]
        return found[0].node if len(found) == 1 else None

    def _launched_alike(self, entry, path: str, new_side: bool, kernel: str, name: str, value) -> bool:
        """True when no other Python file the commit changes launches (or calls) ``kernel`` of ``path``,
        imported by name, passing ``name`` anything but a constant equal to ``value``, on that side. Files the
        commit leaves alone are not read (their blobs are not the commit's)."""
        module = path[:-3].replace("/", ".") if path.endswith(".py") else None
        for change in entry.owned_changes:
            other, blob = (change.new_path, change.new_blob) if new_side else (change.old_path, change.old_blob)
            if not other or not blob or other == path or language_for_path(other) != "python":
                continue
            table = self._table(blob, other)
            if table is None or table.tree is None:
                return False
            root = table.tree.root_node
            bound = [n for n, b in import_bindings(root).items() if b.target.rpartition(".")[2] == kernel
                     and (module is None or module.endswith(b.target.rpartition(".")[0].lstrip("."))
                          or b.target.startswith("."))]
            for alias in bound:
                for launch in _launches_of(root, alias):
                    kernel_node = self._kernel_node(kernel, path, new_side, entry)
                    passed = _passed(launch, list(parameter_defaults(kernel_node))) if kernel_node is not None \
                        else None
                    given = _constant(passed[name], module_values(root)) if passed and name in passed else ...
                    if given is ... or given != value:
                        return False
        return True

    def _kernel_node(self, kernel: str, path: str, new_side: bool, entry):
        """The module-level definition ``kernel`` of ``path`` on one side of the commit, or None."""
        change = next((c for c in entry.owned_changes if (c.new_path if new_side else c.old_path) == path), None)
        blob = (change.new_blob if new_side else change.old_blob) if change is not None else None
        table = self._table(blob, path) if blob else None
        return next((d.node for d in (table.definitions if table is not None else ()) if d.node is not None
                     and d.name == kernel and d.qualified_name == kernel), None)

    def _launch_value(self, table, path: str, kernel: str, name: str, declared: set[str], commit: str | None = None):
        """The value the one launch (or call) of ``kernel`` in its file (``table``, at ``path``) passes its
        parameter ``name``: a constant, or a parameter of the launching definition followed to where it enters
        (``value_at_launch``, ``_entry_value``). Where its file does not launch it, the one launch in the
        other upstream modules the tree anchors definitions of, at ``commit`` (``_anchored_launch``). ``...``
        when not known."""
        root = table.tree.root_node
        launches = _launches_of(root, kernel)
        kernel_node = next((d.node for d in table.definitions if d.node is not None and d.name == kernel
                            and d.qualified_name == kernel), None)
        if not launches and kernel_node is not None and commit is not None:
            found = self._anchored_launch(path, kernel, commit)
            if found is None:
                return ...
            table, path, launch = found
            root, launches = table.tree.root_node, [launch]
        if len(launches) != 1 or kernel_node is None:
            return ...
        launch = launches[0]
        passed = _passed(launch, list(parameter_defaults(kernel_node)))
        argument = passed.get(name) if passed is not None else None
        wrapper = self._definition_around(table, launch)
        if argument is None or wrapper is None:
            return ...
        constants = module_constants(root)
        source = normalise_name(_text(argument)) if argument.type == "identifier" else None
        if source is None or source not in parameter_defaults(wrapper.node):
            return _constant(argument, constants)
        entry = self._entry_value(table, path, wrapper, source, declared)
        return value_at_launch(_function(wrapper.node), _text(argument), entry, launch, module_tables(root),
                               constants)

    def _anchored_launch(self, path: str, kernel: str, commit: str):
        """``(table, path, launch)`` of the one launch of ``kernel`` (defined in ``path``) in the other Python
        modules of the upstream that the tree anchors definitions of, each read at ``commit``, which import it
        by name (under any alias, at module level or inside the launching function) from ``path``'s module; None when there is not exactly one, or a module
        cannot be read. Only ported modules are read: the port runs its kernel from the definitions it
        carries, and a launch elsewhere upstream is not the port's."""
        if not path.endswith(".py"):
            return None
        module = path[:-3]
        others = sorted({a.path for a in self.index.anchors if a.upstream == self.upstream and a.path
                         and a.path != path and language_for_path(a.path) == "python"})
        found = []
        for other in others:
            table = self._table(f"{commit}:{other}", other)
            if table is None or table.tree is None or table.fallback:
                return None
            root = table.tree.root_node
            scopes = [(root, import_bindings(root))] + [
                (body, import_bindings(body)) for node in _walk(root) if node.type == "function_definition"
                and (body := node.child_by_field_name("body")) is not None]
            for scope, alias, binding in [(scope, a, b) for scope, bound in scopes for a, b in bound.items()]:
                stem, _, name = binding.target.rpartition(".")
                if name != kernel or (relative_module_path(other, stem) if stem.startswith(".")
                                      else stem.replace(".", "/")) != module:
                    continue
                found += [(table, other, launch) for launch in _launches_of(scope, alias)
                          if all(launch.start_byte != seen.start_byte or other != where for _, where, seen in found)]
        return found[0] if len(found) == 1 else None

    @staticmethod
    def _definition_around(table, node):
        """The definition of ``table`` whose function encloses ``node`` most closely, or None."""
        function = _enclosing_function(node)
        return next((d for d in table.definitions if d.node is not None and function is not None
                     and _function(d.node) == function), None)

    def _entry_value(self, table, path: str, wrapper, name: str, declared: set[str]):
        """The value a parameter ``name`` of ``wrapper`` (a definition of ``table``'s file) enters with on the
        port's path: where the port anchors ``wrapper``, its default when the port lacks it; else, where
        ``wrapper`` is called once in its file, from a definition the port anchors, what that call passes for
        it from a parameter the port lacks (``lacked_through_caller``: its default). ``...`` when not known, or
        when the tree declares a parameter of that name in the file not carried (the value is then the port's
        choice); a declaration of another parameter says nothing of this one."""
        if any(a.param and normalise_name(a.param) == normalise_name(name)
               for a in self.index.anchors_for_path(self.upstream, {path}, "not-carried")):
            return ...
        anchors = self.index.anchors_for_path(self.upstream, {path})
        own = [a for a in anchors if a.matches_name(wrapper.name, wrapper.qualified_name)]
        caller = wrapper
        if not own:
            calls = _launches_of(table.tree.root_node, wrapper.name)
            caller = self._definition_around(table, calls[0]) if len(calls) == 1 else None
            own = [a for a in anchors if caller is not None and a.matches_name(caller.name, caller.qualified_name)]
        if len(own) != 1:
            return ...
        port = self.index.definition_of(own[0])
        signature = self.index.signature_of(port) if port is not None else None
        if signature is None:
            return ...
        port_names = [p.normalised for p in signature.params if p.normalised not in ("self", "ctx")]
        bound = bound_since_base(caller.node, port_names, declared, self._at_base(own[0]))
        if bound is None:
            return ...
        if caller is wrapper:
            default = parameter_defaults(wrapper.node).get(name, ...)
            return ... if name in bound or default is _OFF else default
        given = lacked_through_caller(caller.node, wrapper.node, wrapper.name, bound, declared)
        return given.get(name, ...) if given is not None else ...

    def _nested_in_lacked_branch(self, entry, symbol: TouchedSymbol, port, param_scope: set[str]):
        """``lacked-branch`` for a definition nested in the ported one (``persistent_grid`` defined inside
        ``matmul``): when the enclosing definition, which this commit also changes, is the same before and after
        for the port (``_lacked_branches``), the nested definition's change lies in paths the port lacks.
        The lacked parameters; empty otherwise."""
        container = symbol.qualified_name.rpartition(".")[0] if language_for_path(symbol.path) == "python" else ""
        if not container or port.anchor.matches_name(symbol.name, symbol.qualified_name) \
                or not port.anchor.matches_name(container.rpartition(".")[2], container):
            return []
        enclosing = next((s for s in entry.symbols if s.qualified_name == container and s.path == symbol.path
                          and s.change == "modified"), None)
        if enclosing is None:
            return []
        new = self._upstream_signature(enclosing.new_blob, enclosing.path, enclosing.qualified_name,
                                       enclosing.new_lines)
        if new is None:
            return []
        return self._lacked_branches(entry, enclosing, new, port.definition, param_scope, port.anchor)

    def _lacked_branch_launches(self, symbol: TouchedSymbol, old: Signature, new: Signature, definition,
                                param_scope: set[str]):
        """``old`` and ``new`` less the Python launches that lie in a branch the port never takes
        (``lacked-branch-launch``): an ``if``/``elif`` branch whose condition, with each parameter the port lacks
        at upstream's default (``lacked_parameters``; a declared not-carried one off), is decided against it, or
        the branches after one decided for it. With the evidence saying what was left out (empty when nothing
        was)."""
        if definition.signature is None or definition.signature.language != "python":
            return old, new, []
        sides = self._modified_sides(symbol, "python", parsed=True)
        tables = self._side_tables(symbol)
        if sides is None or any(t is None or t.tree is None for t in tables):
            return old, new, []
        port_names = {p.normalised for p in definition.signature.params if p.normalised not in ("self", "ctx")}
        lacked = lacked_parameters(sides[0].node, sides[1].node, port_names, _scope_names(param_scope))
        if not lacked:
            return old, new, []
        kept, evidence = [], []
        for index, (signature, side, table) in enumerate(zip((old, new), sides, tables)):
            values = {name: pair[index] for name, pair in lacked.items()}
            spans = untaken_branch_spans(side.node, values, module_values(table.tree.root_node))
            dropped = [launch for launch in signature.launches
                       if any(first <= launch.line <= last for first, last, _ in spans)]
            kept.append(replace(signature, launches=[l for l in signature.launches if l not in dropped])
                        if dropped else signature)
            for launch in dropped:
                condition = next(c for first, last, c in spans if first <= launch.line <= last)
                evidence.append(Evidence(kind=Kind.NOT_CARRIED, side="upstream-old" if index == 0 else "upstream-new",
                                         path=signature.path, line=launch.line, quote=launch.quote,
                                         symbol=signature.name, subject=condition,
                                         message=f"launch of {launch.kernel_normalised} left out: it lies in a branch "
                                                 f"on `{condition}` the port, lacking "
                                                 f"{', '.join(sorted(lacked)[:3])}, never takes"))
        return kept[0], kept[1], evidence

    def _new_options_of(self, entry, symbol: TouchedSymbol, new: Signature, definition, param_scope: set[str],
                        anchor=None) -> list[str]:
        """``new_options`` of a modified Python host against its port ``definition``, where they alone kept
        ``lacked-branch`` from deciding (folded to their defaults, the host is the same for the port)."""
        sides = self._modified_sides(symbol, "python") if definition.signature is not None else None
        if sides is None or definition.signature.language != "python" or symbol.kind not in HOST_KINDS:
            return []
        port_names = {p.normalised for p in definition.signature.params if p.normalised not in ("self", "ctx")}
        lacked = lacked_parameters(sides[0].node, sides[1].node, port_names, _scope_names(param_scope))
        added = set(parameter_defaults(sides[1].node)) - set(parameter_defaults(sides[0].node))
        options = new_options(lacked, added) if lacked else []
        if not options or not self._lacked_branches(entry, symbol, new, definition, param_scope, anchor,
                                                    new_options_too=True):
            return []
        return options


HOST_KINDS = (KIND_FUNCTION, KIND_METHOD)
"""Python definitions a caller calls with arguments (not kernels, whose inputs launches pass)."""


def new_options(lacked: dict[str, tuple[object, object]], added: set[str]) -> list[str]:
    """``new-option``: the parameters this commit adds (``added``, as upstream writes them) that the port lacks
    and does not declare not carried (``lacked_parameters``): inputs upstream's callers can now pass, selecting
    whatever the new value does, that the port cannot accept. ``lacked-branch`` does not fold them to their
    default: the parameter rules judge them."""
    return sorted(name for name in added if normalise_name(name) in lacked
                  and lacked[normalise_name(name)] != (_OFF, _OFF))


def untaken_branch_spans(node, values: dict[str, object], constants: dict[str, object]) -> list[tuple[int, int, str]]:
    """(first line, last line, condition) of each branch of a Python definition ``node`` that a run with
    ``values`` (normalised parameter name -> value, ``...`` unknown) never enters: an ``if`` or ``elif`` body
    whose condition ``_port_value`` decides false, and every clause after one it decides true. A name the
    definition assigns anywhere is not decided by its parameter's value."""
    assigned = {normalise_name(_text(n.child_by_field_name("left"))) for n in _walk(node)
                if n.type in ("assignment", "augmented_assignment") and n.child_by_field_name("left") is not None
                and n.child_by_field_name("left").type == "identifier"}
    values = {name: value for name, value in values.items() if name not in assigned}
    spans: list[tuple[int, int, str]] = []

    def span(part, condition) -> None:
        if part is not None:
            spans.append((part.start_point[0] + 1, part.end_point[0] + 1, _text(condition)))

    for statement in _walk(node):
        if statement.type != "if_statement":
            continue
        clauses = [(statement.child_by_field_name("condition"), statement.child_by_field_name("consequence"))]
        clauses += [(c.child_by_field_name("condition"), c.child_by_field_name("consequence")
                     if c.type == "elif_clause" else c.child_by_field_name("body"))
                    for c in statement.children if c.type in ("elif_clause", "else_clause")]
        decided = None  # the condition a clause before was decided true on
        for condition, body in clauses:
            if decided is not None:
                span(body, decided)
                continue
            if condition is None:
                break  # an else reached without a decision: it may run
            taken = _truth(_port_value(condition, values, constants))
            if taken is None:
                break  # not decided: it and what follows may run
            if taken:
                decided = condition
            else:
                span(body, condition)
    return spans


# --- C/C++: a build the port's target never makes ---------------------------------------

REPORTING_CALLS = frozenset({"printf", "fprintf", "puts", "assert", "abort", "exit", "__trap", "__brkpt", "trap",
                             "std::abort", "std::exit", "std::printf", "__assert_fail", "__assertfail"})
"""Calls that only report, or stop a program that cannot go on: what a build with nothing to run compiles."""

_STATEMENT = re.compile(r"^([A-Za-z_][\w:]*)\s*(\(.*\))?$", re.DOTALL)


def reporting_macros(source: bytes | None) -> set[str]:
    """The object-like macros of ``source`` whose every definition only
    reports or traps (``#define UNSUPPORTED printf("needs sm80")``)."""
    found: dict[str, bool] = {}
    for text, _ in macro_definitions(source or b""):
        match = re.match(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(?![\w(])[ \t]*(.*)$", text, re.DOTALL)
        if match is None:
            continue
        body = match.group(2).strip()
        found[match.group(1)] = found.get(match.group(1), True) and bool(body) and only_reports(body, set())
    return {name for name, reports in found.items() if reports}


def only_reports(text: str, macros: set[str]) -> bool:
    """True when C/C++ statement text only reports or traps: each statement
    a call of ``REPORTING_CALLS``, a use of one of ``macros`` (reporting
    macros), ``#error``, or a bare ``return;`` after one of those."""
    statements = [s.strip() for s in re.split(r";|\n", text) if s.strip()]
    reported = False
    for statement in statements:
        if statement.startswith("#error") or statement.startswith("//"):
            reported = True
            continue
        if statement == "return" and reported:
            continue
        match = _STATEMENT.match(statement)
        if match is None:
            return False
        name, call = match.group(1), match.group(2)
        if name in macros or (call is not None and name in REPORTING_CALLS):
            reported = True
            continue
        return False
    return reported


def _branches_of(conditional) -> list[list]:
    """The two branches (``#if`` part, ``#else`` part) of a conditional with
    one ``#else`` and no ``#elif``, each as its child nodes; [] otherwise."""
    alternative = conditional.child_by_field_name("alternative")
    if alternative is None or alternative.type != "preproc_else":
        return []
    head = conditional.child_by_field_name("name") or conditional.child_by_field_name("condition")
    return [_branch(conditional, {head, alternative}), _branch(alternative, set())]


def live_branches(node, macros: set[str]) -> dict:
    """Conditional id -> (the branch kept, ``"#if"`` or ``"#else"``, the
    condition's text, the branch set aside) for each ``#if``/``#ifdef`` in ``node`` with one
    ``#else`` where exactly one branch only reports or traps
    (``only_reports``; ``macros`` are the reporting macros): that branch is
    what a build with nothing to run compiles, the other is the live one."""
    found = {}
    for current in _walk(node):
        if current.type not in ("preproc_if", "preproc_ifdef"):
            continue
        parts = _branches_of(current)
        if len(parts) != 2:
            continue
        reports = [bool(part) and only_reports("\n".join(_text(c) for c in part if c.type != "comment"), macros)
                   for part in parts]
        if reports.count(True) != 1 or not any(c.type != "comment" for c in parts[reports.index(False)]):
            continue
        kept = reports.index(False)
        head = current.child_by_field_name("name") or current.child_by_field_name("condition")
        found[current.id] = (parts[kept], "#if" if kept == 0 else "#else",
                             " ".join(_text(c) for c in current.children[:1] + ([head] if head is not None else [])),
                             parts[1 - kept])
    return found


def cross_language(path: str, ports) -> bool:
    """True when every one of ``ports`` (at least one; ports or in-tree
    definitions) is written in another language than upstream's ``path``: a
    re-implementation, whose target is not a build of upstream's language."""
    files = [p.anchor.file if hasattr(p, "anchor") else p.file for p in ports]
    return bool(files) and all(language_for_path(f) != language_for_path(path) for f in files)


def _errors_outside(node, skipped: set) -> bool:
    """Whether ``node`` has a parse error outside the subtrees whose ids are ``skipped``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.id in skipped or not current.has_error:
            continue
        if current.type == "ERROR" or current.is_missing:
            return True
        stack.extend(current.children)
    return False


def reporting_spans(node, macros: set[str]) -> list[tuple[int, int]]:
    """(first, last line) of each branch of ``node`` that ``live_branches`` sets aside."""
    return [(dropped[0].start_point[0] + 1, dropped[-1].end_point[0] + 1)
            for _, _, _, dropped in live_branches(node, macros).values() if dropped]


def live_branch_tokens(node, macros: set[str], live: dict | None = None) -> list[str]:
    """A C/C++ definition's tokens with each conditional ``live_branches``
    decides replaced by its live branch."""
    live = live_branches(node, macros) if live is None else live

    def expand(current):
        return live[current.id][0] if current.id in live else None
    return comment_free_tokens(node, expand=expand)


def same_on_live_branch(before, after, macros: set[str], tokens=None) -> list[tuple[str, str]] | None:
    """``[(kept branch, condition)]`` when two C/C++ definition nodes differ,
    and are the same once each conditional with a reporting branch is
    replaced by its live branch (on both sides; errors inside a set-aside
    branch are not read); None otherwise. ``tokens`` post-processes each
    token list (qualifiers left out)."""
    if before is None or after is None:
        return None
    live_before, live_after = live_branches(before, macros), live_branches(after, macros)
    if not live_before and not live_after:
        return None
    skipped = {c.id for live in (live_before, live_after) for *_, dropped in live.values() for c in dropped}
    if _errors_outside(before, skipped) or _errors_outside(after, skipped):
        return None
    shape = tokens or (lambda found: found)
    if shape(comment_free_tokens(before)) == shape(comment_free_tokens(after)):
        return None
    if shape(live_branch_tokens(before, macros, live_before)) != shape(live_branch_tokens(after, macros, live_after)):
        return None
    return sorted({(kept, condition) for _, kept, condition, _ in (*live_before.values(), *live_after.values())})


# --- C/C++: the same stores once the branches a declaration decides are taken ----------------------------


class _NotStraight(Exception):
    """A run of statements ``same_stores`` does not evaluate (a loop, a call with effects, an alias)."""


_FLOAT_SUFFIX = re.compile(r"^[0-9.]+(?:[eE][-+]?[0-9]+)?[fF]$")


def _expanded_body(node, expand):
    """The body of the C/C++ definition ``node`` as ``expand`` reads it, parsed afresh; None on a parse error."""
    from portq.language.symbols import parse

    tokens = comment_free_tokens(node, expand=expand)
    tree = parse(" ".join(tokens).encode(), "cpp")
    if tree.root_node.has_error:
        return None
    for current in _walk(tree.root_node):
        if current.type == "function_definition":
            return current.child_by_field_name("body")
    return None


_CASTS = frozenset({"reinterpret_cast", "static_cast", "const_cast"})


def _pure_declaration(statement) -> str | None:
    """The local a C/C++ statement declares when it is one declaration of one name (a pointer's too) whose
    value stores nothing and calls only casts and pure math; None otherwise."""
    if statement.type != "declaration":
        return None
    declarators = [c for c in statement.named_children if c.type == "init_declarator"]
    if len(declarators) != 1 or any(c.type in ("identifier", "pointer_declarator") for c in statement.named_children
                                    if c.id != declarators[0].id):
        return None
    name, value = declarators[0].child_by_field_name("declarator"), declarators[0].child_by_field_name("value")
    while name is not None and name.type == "pointer_declarator":
        name = name.child_by_field_name("declarator")
    if name is None or name.type != "identifier" or value is None:
        return None
    for current in _walk(value):
        if current.type in ("assignment_expression", "update_expression", "lambda_expression", "new_expression",
                            "delete_expression"):
            return None
        if current.type == "call_expression":
            function = current.child_by_field_name("function")
            if function is not None and function.type == "template_function":
                function = function.child_by_field_name("name")
            if function is None or _text(function) not in _CASTS | _PURE_MATH \
                    and function.type != "primitive_type":
                return None
    return _text(name)


def same_reordered_declarations(old_node, old_expand, new_node, new_expand) -> bool:
    """Rule ``lacked-member``: whether the C/C++ definitions ``old_node`` and ``new_node``, each read as its
    ``expand`` (``declared_off_expander``) reads it, differ only in the order of declarations at the top of
    their bodies: once the statements the reading leaves empty are dropped, the statements between the common
    first and last ones are the same statements in another order, each the one declaration of one local the
    body declares nowhere else, its value storing nothing and calling only casts and pure math
    (``_pure_declaration``), and no two whose order changed reading each other's local. Such declarations
    run in any order to the same values."""
    sides = []
    for node, expand in ((old_node, old_expand), (new_node, new_expand)):
        function = next((n for n in _walk(node) if n.type == "function_definition"), None)
        body = function.child_by_field_name("body") if function is not None else None
        if body is None or body.type != "compound_statement":
            return False
        statements = []
        for st in _statements(body):
            read = expand(st) if expand is not None else None
            if read == []:
                continue  # a statement the reading leaves out
            if read is not None:
                return False  # a statement read as another: not a plain list of statements
            statements.append((st, tuple(comment_free_tokens(st, expand=expand))))
        sides.append((body, statements))
    (old_body, a), (new_body, b) = sides
    start = 0
    while start < min(len(a), len(b)) and a[start][1] == b[start][1]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[len(a) - 1 - end][1] == b[len(b) - 1 - end][1]:
        end += 1
    middles = a[start:len(a) - end], b[start:len(b) - end]
    keys = [[tokens for _, tokens in middle] for middle in middles]
    if not keys[0] or sorted(keys[0]) != sorted(keys[1]) or len(set(keys[0])) != len(keys[0]):
        return False
    for middle in middles:
        if any(_pure_declaration(st) is None for st, _ in middle):
            return False
    names = [_pure_declaration(st) for st, _ in middles[0]]
    if len(set(names)) != len(names):
        return False
    for body in (old_body, new_body):
        declared = Counter(_text(d.child_by_field_name("declarator")) for d in _walk(body)
                           if d.type == "init_declarator" and d.child_by_field_name("declarator") is not None
                           and d.child_by_field_name("declarator").type == "identifier")
        declared.update(_pure_declaration(d) for d in _walk(body) if d.type == "declaration"
                        and any(c.type == "init_declarator" and c.child_by_field_name("declarator") is not None
                                and c.child_by_field_name("declarator").type == "pointer_declarator"
                                for c in d.named_children))
        if any(declared[name] != 1 for name in names):
            return False
    reads = [set(tokens) - {name} for tokens, name in zip(keys[0], names)]
    order = [keys[1].index(k) for k in keys[0]]
    for i, j in itertools.combinations(range(len(names)), 2):
        if (order[i] < order[j]) != (i < j) and (names[j] in reads[i] or names[i] in reads[j]):
            return False
    return True


def same_stores(old_node, old_expand, new_node, new_expand) -> bool:
    """Rule ``declared-stores``: whether the C/C++ definitions ``old_node`` and ``new_node``, each read as its
    ``expand`` (``declared_off_expander``) reads it, store the same values: their bodies match token for token
    except, inside blocks whose other statements match, for runs of straight-line statements (declarations,
    plain and compound stores, ``if``/``else``, nested blocks; pure math only) that leave every place they
    write outside their own locals with the same value, evaluated symbolically (a branch's stores merged as
    ``cond ? a : b``, a store to a typed local converted to its type unless the value has it already). A loop,
    a call with effects, a place written under two spellings of one array, an index that moves, or a local
    read before it is stored is not evaluated: not the same."""
    old_body, new_body = _expanded_body(old_node, old_expand), _expanded_body(new_node, new_expand)
    if old_body is None or new_body is None:
        return False
    if any(n.type == "reference_declarator" for body in (old_body, new_body) for n in _walk(body)):
        return False  # a reference local may name any place: no run is evaluated
    arrays = _local_arrays(old_body) & _local_arrays(new_body)
    try:
        return _same_node(old_body, new_body, arrays)
    except _NotStraight:
        return False


def _local_arrays(body) -> set[str]:
    """The arrays ``body`` declares (``float val[4];``) that no pointer can name: each other mention is indexed
    (never under ``&``) or passed straight to a call whose result is discarded. No other place aliases them."""
    declared: dict[str, int] = {}
    for current in _walk(body):
        if current.type == "array_declarator":
            inner = current.child_by_field_name("declarator")
            while inner is not None and inner.type == "array_declarator":
                inner = inner.child_by_field_name("declarator")
            if inner is not None and inner.type == "identifier":
                declared[_text(inner)] = inner.id
    arrays = set(declared)
    for current in _walk(body):
        if current.type != "identifier" or _text(current) not in declared or current.id == declared[_text(current)]:
            continue
        up = current
        while up.parent is not None and up.parent.type == "subscript_expression" \
                and up.parent.child_by_field_name("argument") is not None \
                and up.parent.child_by_field_name("argument").id == up.id:
            up = up.parent
        if up.id != current.id:
            if up.parent is None or up.parent.type != "pointer_expression":
                continue
        elif up.parent is not None and up.parent.type == "argument_list" and up.parent.parent is not None \
                and up.parent.parent.type == "call_expression" and up.parent.parent.parent is not None \
                and up.parent.parent.parent.type == "expression_statement":
            continue
        arrays.discard(_text(current))
    return arrays


def _tokens(node) -> list[str]:
    return comment_free_tokens(node)


def _same_node(old, new, arrays: set[str]) -> bool:
    if _tokens(old) == _tokens(new):
        return True
    if old.type != new.type:
        return False
    if old.type == "compound_statement":
        return _same_block(old, new, arrays)
    body_field = {"for_statement": "body", "while_statement": "body", "if_statement": None}.get(old.type, "")
    if body_field == "":
        return False
    if old.type == "if_statement":
        if _tokens(old.child_by_field_name("condition")) != _tokens(new.child_by_field_name("condition")):
            return False
        parts = [("consequence",), ("alternative",)]
        for (name,) in parts:
            a, b = old.child_by_field_name(name), new.child_by_field_name(name)
            if (a is None) != (b is None) or (a is not None and not _same_node(a, b, arrays)):
                return False
        return True
    a, b = old.child_by_field_name(body_field), new.child_by_field_name(body_field)
    head = lambda n, body: [t for c in n.children if c.id != body.id for t in _tokens(c)]  # noqa: E731
    return a is not None and b is not None and head(old, a) == head(new, b) and _same_node(a, b, arrays)


def _statements(block) -> list:
    return [c for c in block.named_children if c.type != "comment"]


def _same_block(old, new, arrays: set[str]) -> bool:
    a, b = _statements(old), _statements(new)
    start = 0
    while start < min(len(a), len(b)) and _tokens(a[start]) == _tokens(b[start]):
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and _tokens(a[len(a) - 1 - end]) == _tokens(b[len(b) - 1 - end]):
        end += 1
    middle_a, middle_b = a[start:len(a) - end], b[start:len(b) - end]
    if len(middle_a) == len(middle_b) and all(_same_node(x, y, arrays) for x, y in zip(middle_a, middle_b)):
        return True
    suffix = {t for s in a[len(a) - end:] for t in _tokens(s)}
    runs = []
    for run in (middle_a, middle_b):
        state = _Run(arrays)
        for statement in run:
            state.statement(statement)
        runs.append(state)
    visible = (runs[0].declared | runs[1].declared) & suffix  # the run's locals the matching rest still reads
    if any(name not in run.declared for name in visible for run in runs) \
            or any(runs[0].types[name] != runs[1].types[name] for name in visible):
        return False
    kept = [{k: v for k, v in run.env.items() if k not in run.declared or k in visible} for run in runs]
    for key in set(kept[0]) | set(kept[1]):
        values = [env.get(key, ("in", key)) for env in kept]
        if any(_reads_undefined(v) for v in values) or values[0] != values[1]:
            return False
    return True


def _reads_undefined(value) -> bool:
    if isinstance(value, tuple):
        return value[:1] == ("undef",) or any(_reads_undefined(v) for v in value[1:])
    return False


class _Run:
    """The symbolic state of a run of straight-line C/C++ statements: place -> value, with the types of the
    locals it declares."""

    def __init__(self, arrays: set[str]):
        self.arrays = arrays  # local arrays no pointer names: an element of one is no other place
        self.env: dict[str, tuple] = {}
        self.types: dict[str, str] = {}
        self.declared: set[str] = set()
        self.bases: dict[str, str] = {}  # array or object name -> the one spelling of it written

    def statement(self, node):
        kind = node.type
        if kind == "comment":
            return
        if kind == "declaration":
            self.declaration(node)
        elif kind == "expression_statement" and node.named_child_count == 1 \
                and node.named_children[0].type == "assignment_expression":
            self.store(node.named_children[0])
        elif kind == "compound_statement":
            self.block(node)
        elif kind == "if_statement":
            self.branch(node)
        else:
            raise _NotStraight(kind)

    def block(self, node):
        before = set(self.declared)
        for statement in _statements(node):
            self.statement(statement)
        inner = self.declared - before
        for name in inner:  # the block's own locals end with it
            self.env.pop(name, None)
            self.types.pop(name, None)
        self.declared = before

    def branch(self, node):
        condition = node.child_by_field_name("condition")
        if condition is None or node.child_by_field_name("initializer") is not None:
            raise _NotStraight("if")
        test = self.value(condition.child_by_field_name("value") or condition)
        results = []
        for field in ("consequence", "alternative"):
            part = node.child_by_field_name(field)
            fork = _Run(self.arrays)
            fork.env, fork.types, fork.declared, fork.bases = dict(self.env), dict(self.types), set(self.declared), dict(self.bases)
            if part is not None:
                for statement in ([c for c in part.named_children] if part.type == "else_clause" else [part]):
                    fork.statement(statement)
            results.append(fork)
        for key in set(results[0].env) | set(results[1].env):
            a = results[0].env.get(key, self.env.get(key, ("in", key)))
            b = results[1].env.get(key, self.env.get(key, ("in", key)))
            self.env[key] = a if a == b else ("?", test, a, b)
        for fork in results:
            for base, spelling in fork.bases.items():
                if self.bases.setdefault(base, spelling) != spelling:
                    raise _NotStraight("alias")

    def declaration(self, node):
        kind = node.child_by_field_name("type")
        if kind is None:
            raise _NotStraight("declaration")
        type_text = " ".join(_tokens(kind))
        for child in node.named_children:
            if child.id == kind.id or child.type in ("type_qualifier", "storage_class_specifier", "comment"):
                continue
            if child.type == "identifier":
                name, value = _text(child), ("undef", _text(child))
            elif child.type == "init_declarator" and child.child_by_field_name("declarator") is not None \
                    and child.child_by_field_name("declarator").type == "identifier" \
                    and child.child_by_field_name("value") is not None:
                name = _text(child.child_by_field_name("declarator"))
                value = self.converted(type_text, self.value(child.child_by_field_name("value")))
            else:
                raise _NotStraight("declarator")
            if name in self.env or name in self.bases:
                raise _NotStraight("shadow")
            self.env[name], self.types[name] = value, type_text
            self.declared.add(name)

    def place(self, node) -> str:
        """The key of a place written or read: a name, or an element or member whose indices name nothing
        the run writes; an array written under one spelling only."""
        if node.type == "identifier":
            return _text(node)
        if node.type in ("subscript_expression", "field_expression"):
            names = [_text(n) for n in _walk(node) if n.type == "identifier"]
            if _base_name(node) is None or any(n in self.env for n in names) or not _only_pure_calls(node):
                raise _NotStraight("place")
            return " ".join(_tokens(node))
        raise _NotStraight("place")

    def store(self, assignment):
        left, right = assignment.child_by_field_name("left"), assignment.child_by_field_name("right")
        operator = _text(assignment.child_by_field_name("operator") or assignment.children[1])
        key = self.place(left)
        if left.type != "identifier":
            base = _base_name(left)
            if self.bases.setdefault(base, key) != key \
                    or any(other != base and not {other, base} & self.arrays for other in self.bases):
                raise _NotStraight("alias")  # a place spelt twice, or two places that may be one
        value = self.value(right)
        if operator != "=":
            if operator not in ("+=", "-=", "*=", "/="):
                raise _NotStraight(operator)
            value = (operator[0], self.read(key, left), value)
        if key in self.types:
            value = self.converted(self.types[key], value)
        self.env[key] = value

    def read(self, key, node):
        if key in self.env:
            return self.env[key]
        if node.type != "identifier":
            base = _base_name(node)
            if (base in self.bases and self.bases[base] != key) \
                    or any(other != base and not {other, base} & self.arrays for other in self.bases):
                raise _NotStraight("alias")  # an element a store under another spelling may have written
        return ("in", key)

    def converted(self, type_text: str, value):
        return value if _type_of(value) == type_text.replace(" ", "") else ("conv", type_text, value)

    def value(self, node):
        kind = node.type
        if kind == "parenthesized_expression" and node.named_child_count == 1:
            return self.value(node.named_children[0])
        if kind in ("identifier", "subscript_expression", "field_expression"):
            return self.read(self.place(node), node)
        if kind == "number_literal":
            return ("lit", _text(node))
        if kind in ("true", "false", "null", "nullptr"):
            return ("lit", kind)
        if kind == "cast_expression":
            return ("cast", " ".join(_tokens(node.child_by_field_name("type"))), self.value(node.child_by_field_name("value")))
        if kind == "binary_expression":
            return (_text(node.child_by_field_name("operator")), self.value(node.child_by_field_name("left")),
                    self.value(node.child_by_field_name("right")))
        if kind == "unary_expression":
            return ("u" + _text(node.child_by_field_name("operator")), self.value(node.child_by_field_name("argument")))
        if kind == "conditional_expression":
            return ("?", self.value(node.child_by_field_name("condition")),
                    self.value(node.child_by_field_name("consequence")), self.value(node.child_by_field_name("alternative")))
        if kind == "call_expression":
            function = node.child_by_field_name("function")
            if function is None or function.type != "identifier" or _text(function) not in _PURE_MATH:
                raise _NotStraight("call")
            arguments = node.child_by_field_name("arguments")
            return ("call", _text(function)) + tuple(self.value(a) for a in arguments.named_children if a.type != "comment")
        raise _NotStraight(kind)


def _base_name(node) -> str | None:
    """The array or object a subscript or member expression reads (``val`` of ``val[i][j]``), or None."""
    while node is not None and node.type in ("subscript_expression", "field_expression"):
        node = node.child_by_field_name("argument")
    return _text(node) if node is not None and node.type == "identifier" else None


def _type_of(value) -> str | None:
    """The C/C++ type of a symbolic value where it is plain: a cast's or conversion's, a ``float`` literal's,
    and ``float`` arithmetic of two ``float`` operands; None otherwise."""
    head = value[0]
    if head in ("cast", "conv"):
        return value[1].replace(" ", "")
    if head == "lit" and _FLOAT_SUFFIX.match(value[1]):
        return "float"
    if head in ("+", "-", "*", "/") and len(value) == 3:
        a, b = _type_of(value[1]), _type_of(value[2])
        return a if a == b == "float" else None
    if head == "?":
        a, b = _type_of(value[2]), _type_of(value[3])
        return a if a == b else None
    return None


# --- C/C++: an architecture the definition refused before the change ---------------------

_ARCH_FLAG = re.compile(r"(?:^|[.>:])is_sm_?(\d{2,3})[a-z]?$")
"""A device-architecture test by name: ``is_sm90``, ``arch.is_sm100()``, ``p->is_sm_80``."""


def _arch_of_test(node, locals_: dict[str, str]) -> str | None:
    """The architecture (its ``sm`` number, ``"100"``) a C/C++ expression tests for, or None: a call without
    arguments of a function named for one (``arch.is_sm100()``), a compute capability's major version compared
    for equality with a number (``props->major == 10``, read as ``sm100``), or a local of ``locals_`` (one
    declared once, never assigned, from such a test)."""
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node is None:
        return None
    if node.type == "identifier":
        return locals_.get(_text(node))
    if node.type == "call_expression":
        arguments = node.child_by_field_name("arguments")
        function = node.child_by_field_name("function")
        if arguments is None or arguments.named_child_count or function is None:
            return None
        match = _ARCH_FLAG.search(re.sub(r"\s+", "", _text(function)))
        return match.group(1) if match else None
    if node.type == "binary_expression" and _text(node.child_by_field_name("operator")) == "==":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        for field, number in ((left, right), (right, left)):
            if field is not None and field.type == "field_expression" and number is not None \
                    and number.type == "number_literal" and re.fullmatch(r"\d{1,2}", _text(number)) \
                    and _text(field.child_by_field_name("field") or field) == "major":
                return f"{_text(number)}0"
    return None


def _arch_locals(node) -> dict[str, str]:
    """The locals of a C/C++ definition declared once, never assigned, from an architecture test
    (``bool is_new = props->major == 10;``), with the architecture each tests for."""
    assigned = _assigned_names(node)
    declared = Counter(_text(d.child_by_field_name("declarator")) for d in _walk(node)
                       if d.type == "init_declarator" and d.child_by_field_name("declarator") is not None)
    found: dict[str, str] = {}
    for current in _walk(node):
        if current.type != "init_declarator":
            continue
        name, value = current.child_by_field_name("declarator"), current.child_by_field_name("value")
        if name is None or name.type != "identifier" or value is None or assigned[_text(name)] \
                or declared[_text(name)] != 1:
            continue
        arch = _arch_of_test(value, {})
        if arch is not None:
            found[_text(name)] = arch
    return found


_CHECK_MACRO = re.compile(r"[A-Z][A-Z0-9_]*CHECK")


def _only_refuses(block) -> bool:
    """True when a C/C++ block (or statement) only refuses to go on: each statement a check macro whose
    condition is ``false`` (``LIB_CHECK(false, "unsupported")``), a ``throw``, or a call of
    ``REPORTING_CALLS``; at least one."""
    statements = [c for c in (block.named_children if block.type == "compound_statement" else [block])
                  if c.type != "comment"]
    if not statements:
        return False
    for statement in statements:
        if statement.type == "throw_statement":
            continue
        call = statement.named_children[0] if statement.type == "expression_statement" \
            and statement.named_child_count == 1 else None
        if call is None or call.type != "call_expression":
            return False
        function, arguments = call.child_by_field_name("function"), call.child_by_field_name("arguments")
        name = _text(function) if function is not None else ""
        if _CHECK_MACRO.fullmatch(name) and arguments is not None and arguments.named_child_count \
                and _text(arguments.named_children[0]) in ("false", "0"):
            continue
        if name in REPORTING_CALLS:
            continue
        return False
    return True


def refused_architectures(node) -> tuple[set[str], set[str] | None]:
    """The architectures a C/C++ definition refuses, as ``(named, required)``: ``named`` those an arm of an
    ``if`` tests for alone and only refuses in (``else if (arch.is_sm100()) { LIB_CHECK(false, ...); }``);
    ``required`` (None when there is none) the architectures an unconditional check of the definition's body
    demands (``LIB_CHECK(is_sm90, ...)``, ``LIB_CHECK(a || b, ...)`` over tests), every other one refused."""
    locals_ = _arch_locals(node)
    named: set[str] = set()
    for current in _walk(node):
        if current.type != "if_statement":
            continue
        arch = _arch_of_test(current.child_by_field_name("condition"), locals_) \
            if current.child_by_field_name("condition") is not None else None
        if arch is None:
            condition = current.child_by_field_name("condition")
            value = condition.child_by_field_name("value") if condition is not None else None
            arch = _arch_of_test(value, locals_)
        if arch is not None and _only_refuses(current.child_by_field_name("consequence")):
            named.add(arch)
    required: set[str] | None = None
    body = node.child_by_field_name("body")
    for statement in (body.named_children if body is not None else []):
        call = statement.named_children[0] if statement.type == "expression_statement" \
            and statement.named_child_count == 1 else None
        if call is None or call.type != "call_expression" \
                or not _CHECK_MACRO.fullmatch(_text(call.child_by_field_name("function") or call)):
            continue
        arguments = call.child_by_field_name("arguments")
        if arguments is None or not arguments.named_child_count:
            continue
        archs = _arch_disjunction(arguments.named_children[0], locals_)
        if archs:
            required = archs if required is None else required & archs
    return named, required


def tested_architectures(node) -> set[str]:
    """Every architecture a C/C++ definition tests for by itself, anywhere in it (``_arch_of_test`` with no
    locals): what a change confined to refused architectures names (``refused-architecture``)."""
    return {arch for current in _walk(node) if (arch := _arch_of_test(current, {})) is not None}


def _arch_disjunction(node, locals_: dict[str, str]) -> set[str] | None:
    """The architectures of an ``||`` of architecture tests (one test alone too), or None."""
    while node is not None and node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node is None:
        return None
    if node.type == "binary_expression" and _text(node.child_by_field_name("operator")) == "||":
        left = _arch_disjunction(node.child_by_field_name("left"), locals_)
        right = _arch_disjunction(node.child_by_field_name("right"), locals_)
        return left | right if left and right else None
    arch = _arch_of_test(node, locals_)
    return {arch} if arch is not None else None


def refused_arch_expander(node, refused):
    """Rule ``refused-architecture``: an ``expand`` for ``comment_free_tokens`` over a C/C++ definition that
    reads each test for an architecture ``refused(arch)`` holds as false: a local declared once from such a
    test is left out with its declaration, an ``if`` (an arm of an ``else if`` chain too) so decided is its
    ``else`` (nothing without one), and an ``||``/``&&`` operand so decided leaves the other (``a || T`` is
    ``a``; ``a && T`` is false). None when nothing is decided."""
    locals_ = _arch_locals(node)

    def off(expression) -> bool:
        arch = _arch_of_test(expression, locals_)
        return arch is not None and refused(arch)

    def value(expression) -> bool | None:
        """False where the refused tests decide the expression false; None otherwise."""
        while expression is not None and expression.type in ("parenthesized_expression", "condition_clause"):
            inner = expression.child_by_field_name("value") if expression.type == "condition_clause" else (
                expression.named_children[0] if expression.named_child_count == 1 else None)
            if inner is None:
                return None
            expression = inner
        if expression is None:
            return None
        if off(expression):
            return False
        if expression.type == "binary_expression":
            operator = _text(expression.child_by_field_name("operator"))
            a, b = value(expression.child_by_field_name("left")), value(expression.child_by_field_name("right"))
            if operator == "&&" and (a is False or b is False):
                return False
            if operator == "||" and a is False and b is False:
                return False
        return None

    dropped = {current.parent.id for current in _walk(node)
               if current.type == "init_declarator" and _text(current.child_by_field_name("declarator") or current)
               in locals_ and refused(locals_[_text(current.child_by_field_name("declarator"))])
               and current.parent is not None and current.parent.type == "declaration"
               and current.parent.named_child_count == 2}
    decided = {current.id for current in _walk(node)
               if (current.type == "if_statement" and value(current.child_by_field_name("condition")) is False)
               or (current.type == "binary_expression" and value(current) is None
                   and _text(current.child_by_field_name("operator")) in ("||", "&&")
                   and (value(current.child_by_field_name("left")) is False
                        or value(current.child_by_field_name("right")) is False))
               or (current.type == "binary_expression" and value(current) is False
                   and current.parent is not None and current.parent.type != "condition_clause")}
    if not dropped and not decided:
        return None

    def expand(current):
        if current.id in dropped:
            return []
        if current.id not in decided:
            return None
        if current.type == "if_statement":
            alternative = current.child_by_field_name("alternative")
            return [c for c in alternative.named_children if c.type != "comment"] if alternative is not None else []
        if value(current) is False:
            return ["false"]
        left, right = current.child_by_field_name("left"), current.child_by_field_name("right")
        return [right if value(left) is False else left]

    return expand
