"""Every parameter of every public estimator is described in its class docstring.

The API pages (docs/api/) are built from the numpydoc docstrings, so a parameter
that is missing there, listed out of order or left without a description is a
gap in the reference. For each estimator that ``all_estimators()`` finds, the
Parameters section of the class docstring must

- name the parameters of ``__init__``, in the signature's order (numpydoc's
  ``alpha, min_alpha : float`` entry counts as two names in a row);
- give each a non-empty description;
- state ``default=`` with the signature's default value;
- list, where its type line is a set of strings (``{"error", "empty"}``), exactly
  the strings that the estimator's ``_parameter_constraints`` accepts.

The docstrings are parsed with numpydoc's own parser. Where the docs extra is not
installed (``tools/test.sh`` runs without it), SciPy's vendored copy of the same
parser is used, so this check runs in every test run, not only with the docs build.
"""

from __future__ import annotations

import ast
import inspect
import math

import numpy as np
import pytest
from _helpers import documented_parameters, listed_strings
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import StrOptions

from skembed.utils.discovery import all_estimators

#: Where a docstring's listed strings and the accepted strings differ on purpose, or the fix
#: belongs to a module under another change, with the reason. The test fails when an entry
#: no longer differs, so the list only shrinks.
KNOWN_VALUE_DIFFERENCES: dict = {}


def _same_default(text, value):
    """Whether a docstring's default text denotes the signature's default ``value``."""
    if isinstance(value, type):  # dtype=numpy.float32
        return text in (f"{value.__module__}.{value.__name__}", f"numpy.{value.__name__}")
    if isinstance(value, float) and math.isnan(value):
        return text in ("numpy.nan", "np.nan", "nan")
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False
    return parsed == value and isinstance(parsed, bool) == isinstance(value, bool)


def accepted_strings(cls, name):
    """The strings ``cls._parameter_constraints`` accepts for ``name`` (its StrOptions)."""
    accepted = set()
    for constraint in getattr(cls, "_parameter_constraints", {}).get(name, []):
        if isinstance(constraint, StrOptions):
            accepted |= set(constraint.options) - set(constraint.deprecated)
    return accepted


def parameter_problems(cls):
    """Messages for each way the docstring's Parameters disagree with ``__init__``."""
    signature = {
        name: param.default
        for name, param in inspect.signature(cls.__init__).parameters.items()
        if name != "self" and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
    }
    documented = documented_parameters(cls)
    names = [param.name for param in documented]
    where = cls.__name__
    if names != list(signature):
        missing = [n for n in signature if n not in names]
        extra = [n for n in names if n not in signature]
        if missing or extra:
            return [f"{where}: undocumented {missing}, documented but not taken {extra}"]
        return [f"{where}: documented in the order {names}, the signature's is {list(signature)}"]
    problems = []
    for name, type_line, description, default in documented:
        if not description:
            problems.append(f"{where}.{name}: no description")
        if default is None:
            problems.append(f"{where}.{name}: the type line states no default=")
        elif not _same_default(default, signature[name]):
            problems.append(
                f"{where}.{name}: default={default} documented, {signature[name]!r} taken"
            )
        listed, accepted = listed_strings(type_line), accepted_strings(cls, name)
        if listed and accepted and listed != accepted:
            problems.append(
                f"{where}.{name}: the docstring lists {sorted(listed)}, "
                f"_parameter_constraints accepts {sorted(accepted)}"
            )
    return problems


ESTIMATORS = dict(all_estimators())


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_every_parameter_is_described_in_signature_order(name):
    problems = parameter_problems(ESTIMATORS[name])
    known = {p for p in problems if any(p.startswith(f"{k}:") for k in KNOWN_VALUE_DIFFERENCES)}
    assert [p for p in problems if p not in known] == []


@pytest.mark.parametrize("key", sorted(KNOWN_VALUE_DIFFERENCES))
def test_known_value_differences_still_differ(key):
    """An entry of KNOWN_VALUE_DIFFERENCES that has been fixed must leave the list."""
    name = key.split(".")[0]
    assert any(p.startswith(f"{key}:") for p in parameter_problems(ESTIMATORS[name])), (
        f"{key} agrees now: remove it from KNOWN_VALUE_DIFFERENCES"
    )


def test_there_are_estimators_to_check():
    assert {"Word2VecTransformer", "BertPooledEmbedder", "EntityEmbedder"} <= ESTIMATORS.keys()
    assert len(documented_parameters(ESTIMATORS["Word2VecTransformer"])) >= 20


# ----------------------------------------------------------------------------- the check fails
class _Documented(BaseEstimator):
    """An estimator whose docstring is right.

    Parameters
    ----------
    mode : {"fast", "exact"}, default="fast"
        How it runs.
    alpha, beta : float, default=0.5, 1e-3
        Two rates.
    dtype : numpy dtype, default=numpy.float32
        Output dtype.
    """

    _parameter_constraints: dict = {"mode": [StrOptions({"fast", "exact"})]}

    def __init__(self, mode="fast", alpha=0.5, beta=1e-3, dtype=np.float32):
        self.mode = mode
        self.alpha = alpha
        self.beta = beta
        self.dtype = dtype


def _variant(old, new, init_source=None, constraints=None):
    """``_Documented`` with ``old`` replaced by ``new`` in its docstring (and another signature
    or other constraints)."""
    assert old in _Documented.__doc__
    namespace = {"__doc__": _Documented.__doc__.replace(old, new)}
    if init_source is not None:
        exec(init_source, {"np": np}, namespace)
    if constraints is not None:
        namespace["_parameter_constraints"] = constraints
    return type("Variant", (_Documented,), namespace)


def test_a_correct_docstring_passes():
    assert [p.name for p in documented_parameters(_Documented)] == [
        "mode",
        "alpha",
        "beta",
        "dtype",
    ]
    assert parameter_problems(_Documented) == []


def test_a_blank_description_fails():
    assert parameter_problems(_variant("        How it runs.\n", "")) == [
        "Variant.mode: no description"
    ]


def test_a_missing_or_misordered_parameter_fails():
    assert parameter_problems(_variant("    mode :", "    mod :")) == [
        "Variant: undocumented ['mode'], documented but not taken ['mod']"
    ]
    init = "def __init__(self, alpha=0.5, beta=1e-3, mode='fast', dtype=np.float32):\n    pass\n"
    assert parameter_problems(_variant("", "", init)) == [
        "Variant: documented in the order ['mode', 'alpha', 'beta', 'dtype'], "
        "the signature's is ['alpha', 'beta', 'mode', 'dtype']"
    ]


def test_a_wrong_or_missing_default_fails():
    assert parameter_problems(_variant("0.5, 1e-3", "0.5, 1e-4")) == [
        "Variant.beta: default=1e-4 documented, 0.001 taken"
    ]
    assert parameter_problems(_variant(', default="fast"', "")) == [
        "Variant.mode: the type line states no default="
    ]


def test_a_value_list_that_differs_from_the_constraints_fails():
    wider = {"mode": [StrOptions({"fast", "exact", "auto"})]}
    assert parameter_problems(_variant("", "", constraints=wider)) == [
        "Variant.mode: the docstring lists ['exact', 'fast'], "
        "_parameter_constraints accepts ['auto', 'exact', 'fast']"
    ]
