"""Estimator bases and mixins shared across skembed's packages.

:class:`TorchStateMixin` is the one way a torch-trained estimator pickles its
``nn.Module`` (skorch's scheme): ``__getstate__`` stores the module's kind,
plain-Python configuration and weights as CPU numpy arrays (no torch pickle
in the file, so loading never needs ``torch.load(weights_only=False)``);
``__setstate__`` rebuilds the module through
:func:`skembed.nn.checked.build_checked`, which refuses a configuration the
stored arrays could not back before allocating anything, and moves it to
the fitted device if present here, else to the CPU with a warning.
"""

from __future__ import annotations

__all__ = ["TorchStateMixin", "WeightSnapshotMixin"]


class WeightSnapshotMixin:
    """Best-weight snapshots of a trained torch module, for ``EarlyStopping(restore_best_weights=True)``.

    The one implementation of ``_snapshot_weights``/``_restore_weights`` (the protocol
    :class:`skembed.callbacks.EarlyStopping` calls): a copy of the module's ``state_dict`` on
    its device, loaded back at the end of training. The module is the attribute named by
    ``_trained_module_attribute`` (``"model_"``; ``StaticEmbedder`` trains ``"_head"``).
    """

    #: the attribute holding the module that training updates
    _trained_module_attribute = "model_"

    def _snapshot_weights(self):
        """A copy of the trained module's ``state_dict`` (on its device), for :meth:`_restore_weights`."""
        module = getattr(self, self._trained_module_attribute)
        return {k: v.detach().clone() for k, v in module.state_dict().items()}

    def _restore_weights(self, snapshot):
        getattr(self, self._trained_module_attribute).load_state_dict(snapshot)


class TorchStateMixin(WeightSnapshotMixin):
    """Pickling, and best-weight snapshots, of the ``nn.Module`` in ``model_`` (not public).

    Subclasses define ``_module_classes()``: ``{kind: nn.Module class}`` of
    the modules they may hold (each with a ``kind`` class attribute and a
    ``config`` dict that rebuilds it). A subclass that keeps its fitted
    module on the CPU whatever ``device_`` says sets ``_module_on_cpu = True``.
    """

    #: whether the fitted module stays on the CPU (else it lives on ``device_``)
    _module_on_cpu = False
    #: attributes that only live during ``fit`` (caches) and are not pickled
    _transient_attributes = ()

    def _module_classes(self):  # pragma: no cover - interface
        raise NotImplementedError

    # ------------------------------------------------------------------ pickling
    def __getstate__(self):
        state = dict(super().__getstate__())  # object.__getstate__ returns __dict__ itself
        for key in self._transient_attributes:
            state.pop(key, None)
        model = state.pop("model_", None)
        if model is not None:
            state["_packed_model_"] = {
                "kind": model.kind,
                "config": dict(model.config),
                "state_dict": {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()},
            }
        return state

    def __setstate__(self, state):
        packed = state.pop("_packed_model_", None)
        super().__setstate__(state)
        if packed is None:
            return
        from .nn.checked import build_checked

        what = type(self).__name__
        classes = self._module_classes()
        if not isinstance(packed, dict) or packed.get("kind") not in classes:
            raise ValueError(
                f"{what}: the stored model (_packed_model_) is damaged or was not written by "
                "skembed."
            )
        config, weights = packed.get("config"), packed.get("state_dict")
        if not isinstance(config, dict):
            raise ValueError(
                f"{what}: the stored model (_packed_model_) is damaged or was not written by "
                "skembed."
            )
        if not isinstance(weights, dict):
            raise ValueError(
                f"{what}: the stored weights (_packed_model_) do not load (a {type(weights).__name__}, not a "
                "mapping of names to arrays); the file is damaged or was not written by skembed."
            )
        cls = classes[packed["kind"]]
        model = build_checked(lambda: cls(**config), weights, what, config)
        device = "cpu" if self._module_on_cpu else getattr(self, "device_", "cpu")
        if device != "cpu":
            from .utils._compute import device_after_unpickling

            device = device_after_unpickling(self, device)
        self.model_ = model.to(device)
