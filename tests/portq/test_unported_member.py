"""A method upstream adds to a ported class after the port's pin (issue 24; ``unported-member``).

The tree ports a class by an anchor on its own definition (pinned to the
commit the port reflects) and some of its methods by anchors of their own.
Upstream later adds a helper method to the class; nothing in-tree defines a
method of that name, and none of the class's members the port carries (its
anchored methods, the methods the in-tree class defines, the class's own
body lines) reads it, directly or through other members. A later change to
that helper is not the port's: NOT_APPLICABLE/not-ported, a coverage hole.
What only such a helper reads (a module-level lock it takes, the
module-level call that invokes it) is not the ported class's surface either.

Neighbours stay flagged: a helper a carried member reads (the constructor
selects it), a method the class had at the pin, a method the in-tree class
defines without an anchor, a class anchor with no pin, and a module-level
binding a carried method reads."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history

OPS = "aiter/ops/triton/gather_kv_b_proj.py"  # a path a row of the fixture matrix owns

BASE = '''import json

CACHE = {}


class Layer:
    def __init__(self, n):
        self.n = n
        self.run = self.forward

    def forward(self, x):
        return x * self.n


GenericLayer = Layer
'''

ADDED = BASE.replace('''    def forward(self, x):
        return x * self.n
''', '''    def forward(self, x):
        return x * self.n

    @staticmethod
    def load(filename):
        global CACHE
        with open(filename) as f:
            CACHE = json.load(f)
''') + '''
GenericLayer.load("default.json")
'''

CHANGED = ADDED.replace('''        with open(filename) as f:
            CACHE = json.load(f)
''', '''        try:
            with open(filename) as f:
                CACHE = json.load(f)
        except OSError:
            return False
        return True
''')

PORT = '''# portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::Layer{pin}
class ScaleLayer:
    def __init__(self, n):
        self.n = n
        self.run = self.forward

    # portq: ports vllm:aiter/ops/triton/gather_kv_b_proj.py::Layer.forward{pin}
    def forward(self, x):
        return x * self.n
'''

CALLER = "from .layer import ScaleLayer\n\n\ndef apply(x):\n    return ScaleLayer(2).run(x)\n"


def _history(tmp_path, added, changed, port=PORT, pinned=True, base=BASE):
    commits = [CommitSpec("base", files={OPS: base}), CommitSpec("add a helper", files={OPS: added}),
               CommitSpec("change the helper", files={OPS: changed})]
    _, shas = classify_history(tmp_path / "first", commits, {"kernels/mla_prefix/caller.py": CALLER})
    pin = f" @{shas[0][:10]}" if pinned else ""
    tree = {"kernels/mla_prefix/layer.py": port.replace("{pin}", pin), "kernels/mla_prefix/caller.py": CALLER}
    verdicts, _ = classify_history(tmp_path / "pinned", commits, tree)
    return verdicts[2]


def _symbol(entry, name):
    return next(s for s in entry.symbols if s.symbol.split(".")[-1] == name)


def test_a_helper_added_after_the_pin_and_read_by_no_carried_member_is_not_ported(tmp_path):
    entry = _history(tmp_path, ADDED, CHANGED)
    helper = _symbol(entry, "load")
    assert (helper.verdict, helper.justification) == (NOT_APPLICABLE, "not-ported"), helper.reason
    assert "unported-member" in helper.rules
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-ported"), entry.reason


def test_a_helper_the_carried_constructor_selects_stays_flagged(tmp_path):
    added = ADDED.replace("self.run = self.forward", "self.run = self.load")
    changed = CHANGED.replace("self.run = self.forward", "self.run = self.load")
    entry = _history(tmp_path, added, changed)
    assert entry.verdict in FLAGGED, entry.reason
    assert "unported-member" not in _symbol(entry, "load").rules


def test_a_helper_reached_through_another_uncarried_member_stays_flagged(tmp_path):
    relay = '''    def relay(self, name):
        return self.load(name)

'''
    added = ADDED.replace("self.run = self.forward", "self.run = self.relay").replace(
        "    @staticmethod\n", relay + "    @staticmethod\n")
    changed = CHANGED.replace("self.run = self.forward", "self.run = self.relay").replace(
        "    @staticmethod\n", relay + "    @staticmethod\n")
    entry = _history(tmp_path, added, changed)
    assert entry.verdict in FLAGGED, entry.reason


def test_a_method_the_class_had_at_the_pin_stays_flagged(tmp_path):
    entry = _history(tmp_path, ADDED, CHANGED, base=ADDED)
    assert entry.verdict in FLAGGED, entry.reason
    assert "unported-member" not in _symbol(entry, "load").rules


def test_a_method_the_in_tree_class_defines_stays_flagged(tmp_path):
    port = PORT + '''
    @staticmethod
    def load(filename):
        return {}
'''
    entry = _history(tmp_path, ADDED, CHANGED, port=port)
    assert entry.verdict in FLAGGED, entry.reason


def test_an_unpinned_class_anchor_stays_flagged(tmp_path):
    entry = _history(tmp_path, ADDED, CHANGED, pinned=False)
    assert entry.verdict in FLAGGED, entry.reason


def test_a_module_level_binding_only_the_helper_reads_is_not_the_ports(tmp_path):
    changed = CHANGED.replace("import json\n", "import json\nimport threading\n\nLOCK = threading.Lock()\n").replace(
        "            with open(filename) as f:", "            with LOCK, open(filename) as f:")
    entry = _history(tmp_path, ADDED, changed)
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-ported"), entry.reason


def test_the_module_level_call_of_the_helper_is_not_the_ports(tmp_path):
    changed = ADDED.replace('GenericLayer.load("default.json")\n',
                            'if GenericLayer.load("default.json"):\n    print("loaded")\n')
    entry = _history(tmp_path, ADDED, changed)
    assert (entry.verdict, entry.justification) == (NOT_APPLICABLE, "not-ported"), entry.reason


def test_a_module_level_binding_a_carried_method_reads_stays_flagged(tmp_path):
    added = ADDED.replace("        return x * self.n\n", "        return x * self.n * SCALE\n").replace(
        "CACHE = {}\n", "CACHE = {}\nSCALE = 1\n")
    changed = added.replace("SCALE = 1\n", "SCALE = 2\n")
    entry = _history(tmp_path, added, changed)
    assert entry.verdict in FLAGGED, entry.reason

