"""Every parameter of every public estimator is in docs/glossary.md, taken by the estimators listed.

The glossary (``docs/glossary.md``) gives each parameter name one meaning
across skembed. This test parses its tables (backticked names in the first
column, the estimators in the last) and the names listed in its last section,
then walks ``get_params(deep=False)`` of every public estimator class found
in skembed's public modules, so a new parameter cannot slip in undocumented
and a name cannot be taken by an estimator its row does not list.

The glossary and the docstrings must also agree on what a name takes: every
string value that an estimator's docstring lists for a parameter (the type line
``{"zeros", "nan", "error"}``) is named, in double quotes, in that parameter's
glossary row; and a parameter taken by two or more estimators has a row of its
own (the closing paragraph's list is for names that one estimator takes with
its wrapped scikit-learn estimator's meaning).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest
from _helpers import documented_parameters, listed_strings
from sklearn.base import BaseEstimator

import skembed

GLOSSARY = Path(__file__).resolve().parents[1] / "docs" / "glossary.md"
NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")

#: short names the glossary uses for estimators
ALIASES = {
    "Word2Vec": "Word2VecTransformer",
    "FastText": "FastTextTransformer",
    "GloVe": "GloVeTransformer",
    "Doc2Vec": "Doc2VecTransformer",
    "PPMI": "PPMIEmbedder",
    "BERT": "BertPooledEmbedder",
}


# ----------------------------------------------------------------------------- parsing
def parse_glossary(text):
    """``{name: estimators cell or None}`` from the tables and the last section's paragraph.

    A name listed in several rows keeps every row's cell (joined with ``;``).
    """
    names: dict[str, str | None] = {}
    sections = re.split(r"^## ", text, flags=re.MULTILINE)
    for section in sections[1:]:
        for line in section.splitlines():
            if not line.startswith("|") or set(line) <= set("|-: "):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] == "name":  # header row
                continue
            for name in NAME.findall(cells[0]):
                prev = names.get(name)
                names[name] = cells[-1] if prev is None else f"{prev}; {cells[-1]}"
    last = sections[-1]
    if "|" not in last:  # the closing paragraph: names taken with their usual meaning
        for name in NAME.findall(last):
            names.setdefault(name, None)
    return names


def glossary_rows(text):
    """``{name: row text}`` for every name of a table row (its cells after the first).

    A name listed in several rows keeps every row's text, joined with `` | ``.
    """
    rows: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "name":
            continue
        for name in NAME.findall(cells[0]):
            rest = " | ".join(cells[1:])
            rows[name] = f"{rows[name]} | {rest}" if name in rows else rest
    return rows


def public_estimators():
    """Estimator classes reachable from skembed's public modules (not nn/ or kernels/).

    A class defined in a private module counts when a public module exposes
    it (``skembed.preprocessing`` re-exports ``OneHotEmbedder`` from
    ``_encoders``); base classes (``Base*``, ``_*``) do not.
    """
    found = {}
    modules = [skembed]
    for info in pkgutil.walk_packages(skembed.__path__, "skembed."):
        parts = info.name.split(".")
        if any(p.startswith("_") for p in parts) or parts[1] in ("nn", "kernels"):
            continue
        modules.append(importlib.import_module(info.name))
    for module in modules:
        for cls_name, cls in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(cls, BaseEstimator)
                and cls.__module__.startswith("skembed.")
                and cls_name == cls.__name__
                and not cls_name.startswith(("_", "Base"))
                and not inspect.isabstract(cls)
            ):
                found[cls_name] = cls
    return found


def _group(phrase, name, cls, params):
    """Whether a phrase of an estimators cell covers ``cls``; None if not understood."""
    phrase = phrase.strip().lower()
    module = cls.__module__
    if phrase.startswith("every text estimator but bert"):
        return module.startswith("skembed.text") and name != "BertPooledEmbedder"
    if phrase.startswith("every") or phrase.startswith("as `"):
        return True  # every estimator of a kind: only the name's existence is checked
    if phrase in ("tabular", "tabular estimators"):
        return module.startswith("skembed.tabular")
    if phrase in ("text estimators", "text estimator"):
        return module.startswith("skembed.text")
    if phrase == "encoders":
        return module.startswith("skembed.preprocessing")
    if phrase == "word-vector estimators":
        return "min_count" in params
    if phrase in ("torch engines", "estimators with two implementations"):
        return "engine" in params
    if phrase.startswith('pooling="sif"'):
        return "pooling" in params
    return None


def listed(cell, name, cls, params):
    """Whether the estimators ``cell`` of a row covers estimator ``name``."""
    if cell is None:
        return True
    for row in cell.split(";"):
        for item in (i.strip() for i in row.split(",")):
            if not item:
                continue
            if item == name or ALIASES.get(item) == name:
                return True
            if item in ALIASES or re.fullmatch(r"[A-Z][A-Za-z0-9]+", item):
                continue  # another estimator
            covered = _group(item, name, cls, params)
            if covered is None or covered:
                return True  # a phrase this test does not model counts as covering
    return False


def glossary_problems(cls, glossary):
    """Messages for each parameter of ``cls`` missing from, or not listed by, the glossary."""
    params = cls().get_params(deep=False)
    problems = []
    for param in sorted(params):
        if param not in glossary:
            problems.append(f"{cls.__name__}.{param} is not in docs/glossary.md")
        elif not listed(glossary[param], cls.__name__, cls, params):
            problems.append(
                f"{cls.__name__}.{param}: its glossary row lists {glossary[param]!r}, "
                f"not {cls.__name__}"
            )
    return problems


def value_problems(cls, rows):
    """Messages for each string a docstring lists for a parameter that its glossary row lacks."""
    problems = []
    for param in documented_parameters(cls):
        if param.name not in rows:
            continue
        missing = sorted(
            value
            for value in listed_strings(param.type_line)
            if f'"{value}"' not in rows[param.name]
        )
        if missing:
            problems.append(
                f"{cls.__name__}.{param.name} takes {missing}, which its glossary row does not name"
            )
    return problems


def shared_without_row(estimators, rows):
    """``{parameter: estimators}`` for parameters two or more estimators take, with no row."""
    takers: dict[str, list[str]] = {}
    for name, cls in sorted(estimators.items()):
        for param in cls().get_params(deep=False):
            takers.setdefault(param, []).append(name)
    return {p: names for p, names in takers.items() if len(names) >= 2 and p not in rows}


# ----------------------------------------------------------------------------- tests
@pytest.fixture(scope="module")
def glossary():
    return parse_glossary(GLOSSARY.read_text(encoding="utf-8"))


def test_parser_reads_tables_multi_name_rows_and_the_closing_paragraph(glossary):
    assert glossary["weighting_exponent"] == "GloVe"
    assert glossary["min_n"] == glossary["bucket"] == "FastText"
    assert "Word2VecTransformer" in glossary["alpha"]
    assert "sparse_output" in glossary and glossary["sparse_output"] is None
    assert "name" not in glossary  # header rows are not names


ESTIMATORS = public_estimators()


def test_every_exported_estimator_is_found():
    exported = {
        n for n in skembed.__all__ if isinstance(getattr(skembed, n), type) and n != "KeyedVectors"
    }
    exported = {n for n in exported if issubclass(getattr(skembed, n), BaseEstimator)}
    assert exported <= ESTIMATORS.keys()


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_parameters_are_in_the_glossary(name, glossary):
    assert glossary_problems(ESTIMATORS[name], glossary) == []


def test_an_undocumented_parameter_fails(glossary):
    class DummyEmbedder(BaseEstimator):
        def __init__(self, random_state=None, frobnication=1.0, alpha=0.1):
            self.random_state = random_state  # "every randomised estimator": fine
            self.frobnication = frobnication
            self.alpha = alpha

    problems = glossary_problems(DummyEmbedder, glossary)
    assert problems == [
        f"DummyEmbedder.alpha: its glossary row lists {glossary['alpha']!r}, not DummyEmbedder",
        "DummyEmbedder.frobnication is not in docs/glossary.md",
    ]


def test_a_name_taken_by_an_estimator_its_row_does_not_list_fails(glossary):
    class GloVeTransformer(BaseEstimator):  # GloVe with its old name for the exponent
        def __init__(self, alpha=0.75, weighting_exponent=0.75):
            self.alpha = alpha
            self.weighting_exponent = weighting_exponent

    assert [p.split(":")[0] for p in glossary_problems(GloVeTransformer, glossary)] == [
        "GloVeTransformer.alpha"
    ]


@pytest.fixture(scope="module")
def rows():
    return glossary_rows(GLOSSARY.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_the_values_a_docstring_lists_are_in_the_glossary_row(name, rows):
    assert value_problems(ESTIMATORS[name], rows) == []


def test_a_parameter_of_several_estimators_has_a_glossary_row(rows):
    assert shared_without_row(ESTIMATORS, rows) == {}


def test_rows_hold_the_values_of_their_docstrings(rows):
    """The parser reads the rows the value check relies on."""
    assert '"model"' in rows["handle_unknown"] and '"empty"' in rows["handle_missing"]
    assert rows["truncation"] == rows["stride"]  # one row, two names
    assert '"late_chunking"' in rows["truncation"]
    assert "sparse_output" not in rows  # the closing paragraph is not a row


def test_a_value_missing_from_the_glossary_row_fails(rows):
    class DummyEmbedder(BaseEstimator):
        """A text estimator with one more way to embed an unknown document.

        Parameters
        ----------
        handle_unknown : {"zeros", "nan", "error", "mean"}, default="zeros"
            What a document without a known word becomes.
        """

        def __init__(self, handle_unknown="zeros"):
            self.handle_unknown = handle_unknown

    assert value_problems(DummyEmbedder, rows) == [
        "DummyEmbedder.handle_unknown takes ['mean'], which its glossary row does not name"
    ]


def test_a_shared_parameter_without_a_row_fails(rows):
    class First(BaseEstimator):
        def __init__(self, sparse_output=False, frobnication=1):
            self.sparse_output = sparse_output
            self.frobnication = frobnication

    class Second(First):
        pass

    assert shared_without_row({"First": First, "Second": Second}, rows) == {
        "sparse_output": ["First", "Second"],
        "frobnication": ["First", "Second"],
    }
