"""The public face: `import kdtourney` gives the names a script needs (docs/api.md), each loaded
when first used, and the page's example runs as written."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

import kdtourney

API_PAGE = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_every_public_name_is_there_and_documented():
    page = API_PAGE.read_text(encoding="utf-8")
    for name in kdtourney.__all__:
        if name != "__version__":
            assert getattr(kdtourney, name) is not None
            assert f"kdtourney.{name}" in page, f"docs/api.md does not document {name}"


@pytest.mark.process
def test_importing_kdtourney_loads_no_engine_nor_pandas():
    code = "import sys, kdtourney; print(sorted(m for m in sys.modules if m in " \
           "('numba', 'numpy', 'pandas', 'kdtourney.engine')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.slow
@pytest.mark.process
def test_the_api_page_s_example_runs(tmp_path):
    example = re.search(r"```python\n(.*?)```", API_PAGE.read_text(encoding="utf-8"), re.S)
    run = subprocess.run([sys.executable, "-c", example.group(1)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "greedy" in run.stdout and "random" in run.stdout
    assert (tmp_path / "reports" / "api-demo" / "tournament.sqlite").exists()
