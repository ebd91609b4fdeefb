"""Sphinx configuration of skembed's documentation site.

Built by ``bash tools/docs.sh`` (``sphinx-build -W --keep-going -b html docs docs/_build/html``).
The stack is the one scikit-learn, skrub and imbalanced-learn use: Sphinx with
pydata-sphinx-theme, numpydoc for the docstrings, autosummary for one page per public object,
sphinx-gallery for ``examples/`` (run at build time, cached by file hash) and MyST for the
Markdown user guide.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import skembed  # noqa: E402

project = "skembed"
author = "the skembed developers"
copyright = "2026, the skembed developers"  # noqa: A001
release = skembed.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
    "auto_examples/*.json",
]
templates_path = ["_templates"]
nitpicky = False

# -- API reference -------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
# numpydoc renders the class's Parameters/Attributes; its method table links to the pages
# autosummary generates (templates in _templates/autosummary).
numpydoc_show_class_members = True
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# every docstring of a public object is validated at build time too (tests/test_docs.py holds
# the same list and says why each excluded check is style only): a failing docstring is a
# warning naming the object, hence an error under -W
numpydoc_validation_checks = {"all", "ES01", "SA01", "EX01", "RT02", "GL01", "GL02", "SA03", "SS05"}
numpydoc_validation_exclude = {
    r"\.__init__$",
    r"^sklearn\.",
    r"\.set_output$",
    r"\.get_params$",
    r"\.set_params$",
    r"\.set_\w+_request$",
    r"\.get_metadata_routing$",
    # module-level constants: their docstring is their type's
    r"\.[A-Z][A-Z0-9_]+$",
}


# -- MyST (the Markdown user guide) --------------------------------------------------------
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3

# -- Gallery ------------------------------------------------------------------------------
# each example runs at build time; sphinx-gallery re-runs only the examples whose file
# changed (md5 next to the generated page), so a rebuild after editing one example is quick
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py|/_",
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib", "seaborn"),
    "doc_module": ("skembed",),
    "backreferences_dir": "api/generated/backreferences",
    "reference_url": {"skembed": None},
    "show_memory": False,
    "plot_gallery": "True",
    "min_reported_time": 1,
}

# -- HTML ---------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skembed {release}"
html_static_path = ["_static"]
html_logo = None
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    # gallery pages use the full width for their code and pictures
    "secondary_sidebar_items": {
        "*": ["page-toc"],
        "api/**": ["page-toc"],
        "benchmarks/*": ["page-toc"],
        "auto_examples/*": [],
    },
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "install": []}
html_show_sourcelink = False
html_copy_source = False

os.environ.setdefault("SKEMBED_DOCS_BUILD", "1")
os.environ.setdefault("TQDM_DISABLE", "1")
warnings.filterwarnings("ignore", message=".*Matplotlib is currently using agg.*")
