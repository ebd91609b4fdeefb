"""The documentation: numpydoc validation of every public docstring, an API page for every
public object, and screenshots of the built site (tools/docs.sh) in headless Chromium.

The docstring checks are numpydoc's own (``numpydoc.validate.validate``), minus a short list of
style-only codes (``IGNORED``, each with its reason); docs/conf.py hands the same list to the
Sphinx build (``numpydoc_validation_checks``), so a docstring that fails here also fails
``bash tools/docs.sh``, naming the object.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import skembed

numpydoc_validate = pytest.importorskip("numpydoc.validate", reason="pip install -e '.[docs]'")

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SITE = DOCS / "_build" / "html"

#: the modules users import from; the API reference (docs/api/index.rst) groups by these
PUBLIC_MODULES = [
    "skembed",
    "skembed.text",
    "skembed.tabular",
    "skembed.preprocessing",
    "skembed.compression",
    "skembed.graph",
    "skembed.interactions",
    "skembed.model_selection",
    "skembed.evaluation",
    "skembed.datasets",
    "skembed.callbacks",
    "skembed.exceptions",
    "skembed.dask",
    "skembed.keyedvectors",
    "skembed.utils",
    "skembed.utils.discovery",
]
#: top-level modules that are not part of the public API (internals with their own rules in
#: docs/architecture.md); any other new top-level module must be added to PUBLIC_MODULES
PRIVATE_TOP_LEVEL = {"base", "cli", "kernels", "nn"}

#: numpydoc codes that are style only, with the reason each is not enforced
IGNORED = {
    "ES01": "an extended summary is optional: many methods say all in one line",
    "SA01": "a See Also section is optional; the user guide links related estimators",
    "EX01": "runnable examples live in the class docstrings (doctests) and the gallery; "
    "a per-method Examples section would repeat the class's",
    "RT02": "a named return ('self : object', 'X_new : ndarray of shape ...') is valid numpydoc "
    "and tells the reader what comes back",
    "GL01": "where the summary starts (same line or next) is layout only",
    "GL02": "where the closing quotes go is layout only",
    "SA03": "a See Also description may start with a lower-case word (a name, a parameter)",
    "SS05": "'Return the vectors' or 'Returns the vectors': grammar of the summary only",
}
#: docstrings that still fail, each with the reason (docs/conf.py then excludes the same names
#: from the build's validation); none since the KeyedVectors methods got theirs
PENDING = {}
#: methods inherited from scikit-learn, documented by scikit-learn
SKLEARN_METHODS = {"get_params", "set_params", "set_output", "get_metadata_routing"}


def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return [n for n in names if not n.startswith("__")]


def _own_members(cls):
    """Public methods and properties of ``cls`` defined by skembed (not inherited from sklearn)."""
    for name in sorted(dir(cls)):
        if name.startswith("_") or name in SKLEARN_METHODS or re.match(r"set_\w+_request$", name):
            continue
        for owner in cls.__mro__:
            if name in vars(owner):
                member = vars(owner)[name]
                break
        else:  # pragma: no cover - dir() lists only what the MRO holds
            continue
        if not owner.__module__.startswith("skembed"):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if inspect.isfunction(member) or isinstance(member, property):
            yield name


def public_objects():
    """``(import path, object)`` for every public class, its own methods, and function."""
    seen = set()
    found = []
    for modname in PUBLIC_MODULES:
        module = importlib.import_module(modname)
        for name in _public_names(module):
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)) or id(obj) in seen:
                continue
            seen.add(id(obj))
            found.append(f"{modname}.{name}")
            if inspect.isclass(obj):
                found.extend(f"{modname}.{name}.{m}" for m in _own_members(obj))
    return found


OBJECTS = public_objects()


def test_public_modules_are_listed():
    """A new public package (e.g. skembed.compression) must get its API section."""
    top = {m.name for m in pkgutil.iter_modules(skembed.__path__) if not m.name.startswith("_")}
    unlisted = top - PRIVATE_TOP_LEVEL - {m.split(".")[1] for m in PUBLIC_MODULES if "." in m}
    assert not unlisted, (
        f"new public module(s) {sorted(unlisted)}: add them to PUBLIC_MODULES in "
        "tests/test_docs.py and a section to docs/api/index.rst"
    )


def test_every_public_object_has_an_api_page():
    text = (DOCS / "api" / "index.rst").read_text()
    documented = set()
    module = None
    for line in text.splitlines():
        if m := re.match(r"\.\. currentmodule:: (\S+)", line):
            module = m.group(1)
        elif m := re.match(r"   ([A-Za-z_]\w*)$", line):
            documented.add(f"{module}.{m.group(1)}")
    missing = []
    for modname in PUBLIC_MODULES:
        module_obj = importlib.import_module(modname)
        for name in _public_names(module_obj):
            obj = getattr(module_obj, name)
            if modname == "skembed" and not name.startswith("_"):
                # re-exports of skembed.text, .tabular, ...: documented under their module
                home = [f"{m}.{name}" for m in PUBLIC_MODULES if f"{m}.{name}" in documented]
                if home or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                    continue
            if f"{modname}.{name}" in documented:
                continue
            if inspect.ismodule(obj):
                continue
            # the same object documented under another public module (DaskCorpus)
            if any(
                f"{m}.{name}" in documented and getattr(importlib.import_module(m), name) is obj
                for m in PUBLIC_MODULES
            ):
                continue
            missing.append(f"{modname}.{name}")
    assert not missing, f"no API page for {missing}: add them to docs/api/index.rst"


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(reason=PENDING[n], strict=True))
        if n in PENDING
        else n
        for n in OBJECTS
    ],
)
def test_docstring_passes_numpydoc_validation(name):
    result = numpydoc_validate.validate(name)
    errors = [f"{code}: {msg}" for code, msg in result["errors"] if code not in IGNORED]
    assert not errors, f"{name} ({result['file']}:{result['file_line']}):\n" + "\n".join(errors)


def test_build_validates_with_the_same_checks():
    """docs/conf.py's numpydoc_validation_checks is "all" minus exactly IGNORED."""
    import ast

    tree = ast.parse((DOCS / "conf.py").read_text())
    checks = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and node.targets[0].id == "numpydoc_validation_checks"
    )
    assert checks == {"all", *IGNORED}


def test_validation_finds_a_broken_docstring():
    """The check fails on a docstring that omits a parameter and its return value."""

    def broken(x, y):
        """Add two numbers.

        Parameters
        ----------
        x : int
            The first.
        """
        return x + y

    broken.__module__ = __name__
    globals()["_broken_for_test"] = broken
    try:
        codes = {c for c, _ in numpydoc_validate.validate(f"{__name__}._broken_for_test")["errors"]}
    finally:
        del globals()["_broken_for_test"]
    assert {"PR01", "RT01"} <= codes


def _estimator_classes():
    from skembed.utils.discovery import all_estimators

    return [cls for _, cls in all_estimators()]


@pytest.mark.parametrize("cls", _estimator_classes(), ids=lambda c: c.__name__)
def test_estimator_docstring_names_its_source_and_shapes(cls):
    """Where a paper or a tool is the origin, a References section says which; the class or its
    ``fit`` says what it raises; ``transform`` says the shape of what it returns."""
    doc = numpydoc_validate.get_doc_object(cls)
    assert doc["References"], f"{cls.__name__}: add a References section (paper or tool)"
    fit_doc = numpydoc_validate.get_doc_object(cls.fit)
    assert doc["Raises"] or fit_doc["Raises"], f"{cls.__name__}: add a Raises section"
    if cls.transform.__module__.startswith("skembed"):
        returns = numpydoc_validate.get_doc_object(cls.transform)["Returns"]
        kind = returns[0].type if returns else ""
        assert "shape" in kind and re.search(r"float|dtype|int|bool", kind), (
            f"{cls.__name__}.transform: say the shape and dtype of the returned array"
        )


# -- screenshots of the built site ----------------------------------------------------------

CHROMIUM = next(
    (p for p in ("chromium", "chromium-browser", "google-chrome") if shutil.which(p)), None
)
PAGES = {
    "landing": "index.html",
    "api": "api/generated/skembed.text.TfidfLSA.html",
    "gallery": "auto_examples/plot_document_map.html",
}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_built_page_renders_in_chromium(page):
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (apt-get install -y chromium)")
    path = SITE / PAGES[page]
    if not path.exists():
        pytest.skip(f"{path.relative_to(ROOT)} is not built: run bash tools/docs.sh")
    out = DOCS / "_build" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    png = out / f"{page}.png"
    png.unlink(missing_ok=True)
    flags = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    flags += ["--window-size=1280,1400", "--virtual-time-budget=5000"]
    subprocess.run(
        [*flags, f"--screenshot={png}", path.as_uri()], check=True, timeout=120, capture_output=True
    )
    dom = subprocess.run(
        [*flags, "--dump-dom", path.as_uri()],
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    ).stdout

    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title and "skembed" in title.group(1), f"{page}: no skembed title"
    assert 'class="bd-header' in dom and "navbar" in dom, f"{page}: no navigation bar"
    assert "Gallery" in dom and "API reference" in dom, f"{page}: navigation lacks its links"
    images = re.findall(r'<img[^>]+src="([^"]+)"', dom)
    local = [src for src in images if not src.startswith(("http", "data:"))]
    assert local, f"{page}: no image on the page"
    for src in local:
        assert (path.parent / src.split("#")[0]).resolve().exists(), f"{page}: missing {src}"

    from PIL import Image, ImageStat

    with Image.open(png) as shot:
        assert shot.size == (1280, 1400)
        colours = shot.convert("RGB").resize((128, 140)).getcolors(maxcolors=1 << 16)
        spread = ImageStat.Stat(shot.convert("L")).stddev[0]
    # a blank or unstyled page has a handful of colours; text, theme and a plot have hundreds
    assert colours is None or len(colours) > 50, f"{page}: the screenshot looks blank"
    assert spread > 10, f"{page}: the screenshot looks blank"


# -- the front page, CI and the gallery ------------------------------------------------------


def test_readme_is_a_short_front_page():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    for command in ("bash tools/compare.sh", "bash tools/test.sh", "bash tools/docs.sh"):
        assert command in readme, f"README.md: {command} missing"
    for image in re.findall(r"!\[[^]]*\]\(([^)]+)\)", readme):
        assert (ROOT / image).exists(), f"README.md: image {image} missing"


def test_ci_runs_the_readme_test_command_then_the_docs():
    lines = [
        line.strip()
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line.strip().startswith("bash tools/")
    ]
    assert lines == ["bash tools/test.sh", "bash tools/docs.sh"]


def test_gallery_has_ten_examples_each_with_a_picture():
    examples = sorted((ROOT / "examples").glob("plot_*.py"))
    assert len(examples) >= 10
    images = DOCS / "auto_examples" / "images"
    if not images.exists():
        pytest.skip("the gallery is not built: run bash tools/docs.sh")
    for example in examples:
        assert (images / f"sphx_glr_{example.stem}_001.png").exists(), (
            f"{example.relative_to(ROOT)} drew no picture"
        )
