"""An import moved to the package that re-exports the same object (issue 24,
"form without meaning"): ``from pkg.sub.mod import f`` → ``from pkg.sub import
f`` where the package's ``__init__`` binds ``f`` by importing it from that
module gives every ported definition using ``f`` the same object
(``reexported-import``, cosmetic). A package that binds another object under
the name, or shadows the re-export, keeps the change flagged.

Each runs the real ``portq scan`` over a small synthetic history: base, then
the edit (entry 1)."""
from __future__ import annotations

from portq.core.model import FLAGGED, NOT_APPLICABLE
from tests.portq.fixtures import CommitSpec
from tests.portq.golden.pipeline import classify_history
from tests.portq.test_absent_platform import BASE, MATRIX, _tree

MATH = '''\
def cdiv(a, b):
    return (a + b - 1) // b
'''

OTHER = '''\
def cdiv(a, b):
    return a // b
'''

_DEEP = BASE.replace("from ops.utils import cdiv", "from ops.helpers.math import cdiv")
_SHALLOW = BASE.replace("from ops.utils import cdiv", "from ops.helpers import cdiv")


def _edit(tmp_path, before, after, package, files=None, base_package=""):
    common = {"ops/helpers/math.py": MATH, "ops/helpers/other.py": OTHER, **(files or {})}
    verdicts, _ = classify_history(tmp_path, [
        CommitSpec("base", files={"ops/rows.py": before, "ops/helpers/__init__.py": base_package, **common}),
        CommitSpec("edit", files={"ops/rows.py": after, "ops/helpers/__init__.py": package, **common}),
    ], _tree(), matrix=MATRIX)
    return verdicts[1]


def _imports(verdict):
    return next(s for s in verdict.symbols if s.symbol == "<toplevel>")


def _cosmetic(verdict):
    assert verdict.verdict == NOT_APPLICABLE, [(s.symbol, s.verdict, s.reason) for s in verdict.symbols]
    imports = _imports(verdict)
    assert (imports.justification, imports.rules) == ("cosmetic", ["reexported-import"]), imports.reason


def test_an_import_from_the_package_that_re_exports_the_same_function_is_cosmetic(tmp_path):
    _cosmetic(_edit(tmp_path, _DEEP, _SHALLOW, "from .math import cdiv\n"))


def test_a_re_export_listed_in_all_through_an_absolute_import_is_followed(tmp_path):
    _cosmetic(_edit(tmp_path, _DEEP, _SHALLOW, 'from ops.helpers.math import cdiv\n\n__all__ = ["cdiv"]\n'))


def test_relative_imports_on_both_sides_are_followed(tmp_path):
    before = BASE.replace("from ops.utils import cdiv", "from .helpers.math import cdiv")
    after = BASE.replace("from ops.utils import cdiv", "from .helpers import cdiv")
    _cosmetic(_edit(tmp_path, before, after, "from .math import cdiv\n"))


def test_the_other_way_round_from_the_package_to_its_module_is_cosmetic_too(tmp_path):
    package = "from .math import cdiv\n"
    _cosmetic(_edit(tmp_path, _SHALLOW, _DEEP, package, base_package=package))


def test_a_package_that_binds_another_object_under_the_name_stays_flagged(tmp_path):
    verdict = _edit(tmp_path, _DEEP, _SHALLOW, "from .other import cdiv\n")
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "reexported-import" not in _imports(verdict).rules


def test_a_package_that_shadows_the_re_export_stays_flagged(tmp_path):
    package = "import functools\n\nfrom .math import cdiv\n\ncdiv = functools.lru_cache(cdiv)\n"
    verdict = _edit(tmp_path, _DEEP, _SHALLOW, package)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "reexported-import" not in _imports(verdict).rules


def test_a_package_that_defines_its_own_function_of_that_name_stays_flagged(tmp_path):
    package = "from .math import cdiv\n\n\ndef cdiv(a, b):\n    return a // b\n"
    verdict = _edit(tmp_path, _DEEP, _SHALLOW, package)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "reexported-import" not in _imports(verdict).rules


def test_a_star_import_of_a_module_listing_the_name_in_all_is_followed(tmp_path):
    files = {"ops/helpers/math.py": MATH + '\n__all__ = ["cdiv"]\n'}
    _cosmetic(_edit(tmp_path, _DEEP, _SHALLOW, "from .math import *\n", files=files))


def test_a_star_import_of_a_module_that_does_not_export_the_name_stays_flagged(tmp_path):
    files = {"ops/helpers/math.py": MATH + '\n__all__ = ["other"]\n'}
    verdict = _edit(tmp_path, _DEEP, _SHALLOW, "from .math import *\n", files=files)
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "reexported-import" not in _imports(verdict).rules


def test_two_star_imports_that_could_each_bind_the_name_stay_flagged(tmp_path):
    verdict = _edit(tmp_path, _DEEP, _SHALLOW, "from .math import *\nfrom .other import *\n")
    assert verdict.verdict in FLAGGED, verdict.reason
    assert "reexported-import" not in _imports(verdict).rules
