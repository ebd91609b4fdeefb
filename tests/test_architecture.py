"""The import rules of docs/architecture.md, checked on the source with ``ast``.

Every ``import`` statement counts, including those inside functions (the
lazy imports of torch and of sibling modules): a rule holds for what a module
may import at any time, not only at import time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "skembed"

# The packages at the top of the arrows: nothing below them may import them.
TOP = ("skembed.model_selection", "skembed.cli", "skembed.dask")
# What utils/ may not import: the estimators' packages and everything on top of them.
ABOVE_UTILS = ("skembed.text", "skembed.tabular", "skembed.preprocessing", *TOP)


def _module_name(path, root):
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def imported_modules(path, root=PACKAGE):
    """Absolute names of every module ``path`` (inside ``root``) imports, relative ones resolved."""
    name, is_package = _module_name(path, root)
    package = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            found.add(module)
            # ``from . import x`` / ``from .. import text`` import submodules by name
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def modules_under(*subpackages):
    paths = []
    for sub in subpackages:
        paths.extend(sorted((PACKAGE / sub).rglob("*.py")))
    return [pytest.param(path, id=str(path.relative_to(PACKAGE.parent))) for path in paths]


def _is_within(name, prefixes):
    return any(name == prefix or name.startswith(prefix + ".") for prefix in prefixes)


def test_the_checker_resolves_relative_and_lazy_imports(tmp_path):
    fake = tmp_path / "skembed" / "utils"
    fake.mkdir(parents=True)
    source = fake / "_mod.py"
    source.write_text(
        "from ..text import bert\n"
        "from . import _compute\n"
        "def f():\n"
        "    import sklearn.base\n"
        "    from ..model_selection._runner import run\n"
    )
    found = imported_modules(source, root=tmp_path / "skembed")
    assert {"skembed.text.bert", "skembed.utils._compute", "sklearn.base"} <= found
    assert "skembed.model_selection._runner" in found
    assert _is_within("skembed.text.bert", ABOVE_UTILS)
    assert not _is_within("skembed.textual", ABOVE_UTILS)


@pytest.mark.parametrize("path", modules_under("kernels", "nn"))
def test_kernels_and_nn_know_nothing_of_scikit_learn(path):
    bad = sorted(name for name in imported_modules(path) if _is_within(name, ("sklearn",)))
    assert not bad, f"{path.name} imports {bad}: kernels/ and nn/ must not import scikit-learn"


@pytest.mark.parametrize("path", modules_under("kernels"))
def test_kernels_do_not_import_torch(path):
    bad = sorted(name for name in imported_modules(path) if _is_within(name, ("torch",)))
    assert not bad, f"{path.name} imports {bad}: kernels/ are numba only"


@pytest.mark.parametrize("path", modules_under("utils"))
def test_utils_import_no_estimator_package(path):
    bad = sorted(name for name in imported_modules(path) if _is_within(name, ABOVE_UTILS))
    assert not bad, (
        f"{path.name} imports {bad}: utils/ serves the estimators and may not import "
        "their packages (move the shared piece down into utils/ instead)"
    )


@pytest.mark.parametrize(
    "path", modules_under("kernels", "nn", "utils", "text", "tabular", "preprocessing")
)
def test_nothing_below_imports_model_selection_cli_or_dask(path):
    bad = sorted(name for name in imported_modules(path) if _is_within(name, TOP))
    assert not bad, f"{path.name} imports {bad}: model_selection/, cli.py and dask.py sit on top"


def test_architecture_page_names_every_package_and_public_module():
    page = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = []
    for path in sorted(PACKAGE.iterdir()):
        if path.is_dir() and (path / "__init__.py").exists():
            if f"{path.name}/" not in page:
                missing.append(f"{path.name}/")
            for module in sorted(path.glob("*.py")):
                if not module.stem.startswith("_") and module.stem not in page:
                    missing.append(f"{path.name}/{module.name}")
        elif path.suffix == ".py" and path.name not in page:
            missing.append(path.name)
    assert not missing, f"docs/architecture.md does not mention {missing}: add one line each"


def test_test_modules_do_not_import_each_other():
    tests = Path(__file__).resolve().parent
    bad = {}
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            names = [n for n in names if n.startswith(("test_", "tests.", "conftest"))]
            if names:
                bad.setdefault(path.name, []).extend(names)
    assert not bad, f"test modules import each other: {bad}; share helpers in tests/_helpers.py"


def test_tests_mirror_the_package():
    tests = Path(__file__).resolve().parent
    subdirs = {p.name for p in tests.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert subdirs <= packages, (
        f"tests/{sorted(subdirs - packages)} has no skembed/ subpackage of that name: test "
        "modules live in the folder of the package they test (tests/ mirrors skembed/)"
    )
    for sub in subdirs:
        assert list((tests / sub).glob("test_*.py")), f"tests/{sub}/ holds no test module"
