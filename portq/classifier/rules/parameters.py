"""Parameter rules: an upstream definition's interface, old against new, placed against its port (DESIGN §6).

Parameters compare by normalised name (``src_cache_ptr`` is ``src_cache``).
Each delta places the port behind (a gap, REAL_GAP or INERT by its
callers), in sync, undecided (NEEDS_REVIEW) or in a declared scope.
"""

from portq.classifier.rules import Rule

RULES = (
    Rule("parameter-change", ("REAL_GAP", "INERT", "IN_SYNC"),
         "A parameter upstream added or removed that the port still lacks or still takes leaves the port behind; "
         "a port that already matches, or returns what a new out-parameter carries, is in sync.",
         "-def k(x, n):\n+def k(x, n, stride):  (the port's k(x, n) lacks stride)",
         "classifier.deltas._parameter_items"),
    Rule("heuristic-parameter", ("NEEDS_REVIEW",),
         "A constexpr a `@triton.heuristics` lambda computes from the kernel's own arguments, added or removed, "
         "is an implementation detail no caller passes: for a reader, never a gap.",
         "+@triton.heuristics({'EVEN_K': lambda a: a['K'] % a['BLOCK_K'] == 0})",
         "classifier.deltas._parameter_items"),
    Rule("derived-parameter", ("NEEDS_REVIEW",),
         "A new parameter (or launch argument) upstream computes only from shapes, constants and values the "
         "kernel already receives is how upstream implements the kernel, not an input the port's callers must "
         "supply: for a reader (at most NEEDS_REVIEW), quoting the derivation.",
         "+    padded = triton.next_power_of_2(d)\n+    k[grid](x, d, PADDED=padded)",
         "classifier.deltas._parameter_items, ._derived_arguments_item"),
    Rule("redesigned-port", ("NEEDS_REVIEW",),
         "A port sharing under half of upstream's parameters is a redesign: that it lacks a new upstream "
         "parameter says nothing about its shape.",
         "+def k(a, b, c, d):  (the port k(x, y, c) shares one of three)",
         "classifier.deltas._parameter_items"),
    Rule("parameter-default", ("REAL_GAP", "INERT", "IN_SYNC", "NEEDS_REVIEW"),
         "A parameter that gained or lost its default upstream leaves a port that did not follow behind.",
         "-def f(x, scale):\n+def f(x, scale=None):",
         "classifier.deltas._parameter_items"),
    Rule("compile-time-parameter", ("IN_SYNC", "NEEDS_REVIEW"),
         "Across languages a C++ template parameter and a `tl.constexpr` need not correspond: only a match by "
         "name decides (IN_SYNC); otherwise for a reader.",
         "-template <int BLOCK>\n+template <int BLOCK, bool PAGED>",
         "classifier.deltas._cross_language_constexpr_items"),
    Rule("dead-input", ("REAL_GAP", "INERT", "IN_SYNC"),
         "A parameter upstream now leaves unused (dead) that the port still takes and uses leaves it behind; a "
         "port that dropped it or leaves it unused too is in sync.",
         "-    y = x * scale\n+    y = x  (scale still in the signature)",
         "classifier.deltas._parameter_items"),
    Rule("declared-scope", ("NOT_APPLICABLE",),
         "Every change confined to parameters the tree declares not carried (`not-carried K[PARAM]`), the "
         "arguments passing them and the branches they select is NOT_APPLICABLE/not-carried.",
         "+    if use_fp4: k_fp4[grid](...); return  (`not-carried ...::k[use_fp4]`)",
         "classifier.verdicts.SymbolClassifier._confined_to_scope, ._from_items"),
)
