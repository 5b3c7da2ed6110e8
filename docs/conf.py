"""Sphinx configuration of kdtourney's documentation site: the README as its home page and the
Markdown pages of docs/ (MyST). Built in the tests with warnings as errors (tests/test_docs.py):
    sphinx-build -W --keep-going -b html docs docs/_build
"""

project = "kdtourney"
extensions = ["myst_parser", "sphinx.ext.autodoc"]  # autodoc: the API page (api.md)
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the signatures say enough; the docstrings say the types
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3  # GitHub's anchors (#game-clocks), so links work on GitHub and here
html_theme = "furo"
html_title = "kdtourney"
suppress_warnings = ["misc.highlighting_failure"]  # protocol.md shows JSON with "..." elisions
