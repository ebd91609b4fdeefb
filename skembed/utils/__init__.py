"""Private helpers shared by the estimators.

Nothing in this package is public API except :mod:`skembed.utils.discovery`
once it exists; the modules are:

- ``_compute``: device, engine and thread-count resolution, ``limit_threads``;
- ``_progress``: tqdm bars and per-epoch reports;
- ``_seeding``: integer seeds and torch generators drawn from ``random_state``;
- ``_state``: ``restore_on_failure``, which undoes a fit that raised;
- ``_validation``: ``check_documents``, the text-input check;
- ``_targets``: checks of a supervised ``y`` and cross-fitting (SetFit, supervised static).
- ``discovery`` (public): ``all_estimators``, every public estimator class, for tests/test_common.py.
"""
