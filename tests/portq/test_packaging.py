"""A regular install (the wheel, ``pipx``) runs every command without a checkout.

The build copies the templates and the demo's data into ``portq/_data/``
(``setup.py``); these tests lay the package out as the wheel does, in a
directory outside the repository, and run the commands that read those files
from there. ``.ci/run`` builds the real sdist and wheel and runs the same
commands from a fresh virtualenv.
"""

from __future__ import annotations

import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """``site/portq`` as the wheel lays it out: the package plus ``_data/``."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(REPOSITORY / "portq", site / "portq", ignore=shutil.ignore_patterns("__pycache__", "_data"))
    setup = runpy.run_path(str(REPOSITORY / "setup.py"), run_name="not_main")
    setup["bundle"](REPOSITORY, site / "portq" / "_data")
    return site


def _portq(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONPATH=str(site))
    return subprocess.run([sys.executable, "-m", "portq", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=300)


def test_setup_bundles_every_template_the_code_renders(installed):
    shipped = {path.name for path in (installed / "portq" / "_data" / "templates").iterdir()}
    source = {path.name for path in (REPOSITORY / "templates").glob("*.j2")}
    assert shipped == source
    for name in source:  # each one is rendered by some command
        assert any(name in path.read_text(encoding="utf-8") for path in (REPOSITORY / "portq").rglob("*.py")), name


def test_installed_package_reads_its_own_copy(installed, tmp_path):
    probe = _portq(installed, tmp_path, "--version")
    assert probe.returncode == 0, probe.stderr
    where = subprocess.run([sys.executable, "-c", "import portq.core.bundled as b; print(b.templates_dir()); print(b.demo_root())"],
                           cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(installed)),
                           capture_output=True, text=True, check=True).stdout.split()
    assert where == [str(installed / "portq" / "_data" / "templates"), str(installed / "portq" / "_data" / "demo")]


def test_demo_summary_html_and_dashboard_run_from_an_install(installed, tmp_path):
    keep = tmp_path / "keep"
    demo = _portq(installed, tmp_path, "demo", "--check", "--keep", str(keep))
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    ledger = ["--ledger", str(keep / "stale-tree" / "ledger.sqlite"), "--upstream", f"vllm={keep / 'upstream' / 'vllm'}"]
    page = _portq(installed, tmp_path, "summary", "--html", str(tmp_path / "page.html"), *ledger)
    assert page.returncode == 0, page.stderr
    assert "<html" in (tmp_path / "page.html").read_text(encoding="utf-8").lower()
    dashboard = _portq(installed, tmp_path, "file-issue", "--dashboard", *ledger)
    assert dashboard.returncode == 0, dashboard.stderr
    assert (tmp_path / "reports" / "dashboard.md").read_text(encoding="utf-8").strip()
    helped = _portq(installed, tmp_path, "--help")
    assert helped.returncode == 0 and "scan" in helped.stdout + helped.stderr


def test_an_installed_series_builds_the_same_shas_as_the_checkout(installed, tmp_path):
    """pip byte-compiles the .py files of the bundled series; the built histories must not see it."""
    import compileall

    compileall.compile_dir(str(installed / "portq" / "_data"), quiet=1)
    assert list((installed / "portq" / "_data").rglob("__pycache__"))
    script = ("import sys; from pathlib import Path; from portq.pipeline.demo import build_all, EXAMPLES_DIR; "
              "built = build_all(Path(sys.argv[1]), EXAMPLES_DIR); "
              "print(' '.join(f'{name}={b.shas[-1]}' for name, b in sorted(built.items())))")
    def shas(site, destination):
        environment = dict(os.environ, PYTHONPATH=str(site))
        return subprocess.run([sys.executable, "-c", script, str(destination)], cwd=tmp_path, env=environment,
                              capture_output=True, text=True, check=True).stdout
    assert shas(installed, tmp_path / "installed") == shas(REPOSITORY, tmp_path / "checkout")
