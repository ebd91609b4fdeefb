"""Private helpers shared by the estimators.

Public here: :func:`clear_caches` (empties every process-level cache) and
:mod:`skembed.utils.discovery` (``all_estimators``); the private modules are:

- ``_compute``: device, engine and thread-count resolution, ``limit_threads``;
- ``_progress``: tqdm bars and per-epoch reports;
- ``_seeding``: integer seeds and torch generators drawn from ``random_state``;
- ``_state``: ``restore_on_failure``, which undoes a fit that raised;
- ``_validation``: ``check_documents``, the text-input check;
- ``_targets``: checks of a supervised ``y`` and cross-fitting (SetFit, supervised static);
- ``_training``: ``run_epochs``, the one training loop;
- ``_caches``: the registry of process-level caches behind ``clear_caches``;
- ``_files``: ``write_atomically``, saving through a temporary file renamed into place;
- ``discovery`` (public): ``all_estimators``, every public estimator class, for tests/test_common.py.
"""

from ._caches import clear_caches

__all__ = ["clear_caches"]
