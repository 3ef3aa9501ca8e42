"""Pydantic models built from values that are valid already, on the dragging hot path.

Each target a client sends builds a target twice (the message's, then the canonical
one) and a new task spec holding it. pydantic's generic ``model_construct`` walks every
field's aliases and defaults (about 4 µs a target) and ``model_copy`` copies through
``copy.copy`` (about 3 µs). :func:`construct` and :func:`replaced` build the very same
instances (same ``__dict__`` in field order, same fields set, no extra, no private
values) directly, for models whose defaults are immutable constants and that have no
aliases, post-init hook or private attributes; other models take pydantic's own path.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_IMMUTABLE = (type(None), bool, int, float, str, bytes, tuple, frozenset)
_setattr = object.__setattr__


@functools.cache
def _defaults(cls: type[BaseModel]) -> dict[str, Any] | None:
    """The defaults of every field of ``cls`` in field order, when :func:`construct`
    may build it directly (else None: pydantic's ``model_construct`` is needed)."""
    if (
        cls.__pydantic_post_init__
        or cls.__pydantic_root_model__
        or cls.__private_attributes__
        or cls.model_config.get("extra") == "allow"
    ):
        return None
    defaults: dict[str, Any] = {}
    for name, field in cls.model_fields.items():
        plain = field.alias in (None, name) and field.validation_alias in (None, name)
        if not plain or field.is_required() or field.default_factory is not None:
            return None
        if not isinstance(field.default, _IMMUTABLE):
            return None
        defaults[name] = field.default
    return defaults


def construct(cls: type[M], /, **values: Any) -> M:
    """``cls.model_construct(**values)`` (``values``: valid values of fields of ``cls``,
    by name), without pydantic's per-field walk when ``cls`` allows it."""
    defaults = _defaults(cls)
    if defaults is None:
        return cls.model_construct(**values)
    fields = defaults.copy()
    fields.update(values)
    model = cls.__new__(cls)
    _setattr(model, "__dict__", fields)
    _setattr(model, "__pydantic_fields_set__", set(values))
    _setattr(model, "__pydantic_extra__", None)
    _setattr(model, "__pydantic_private__", None)
    return model


def replaced(model: M, /, **updates: Any) -> M:
    """``model.model_copy(update=updates)`` (``updates``: valid values of fields of
    ``model``, by name), without ``copy.copy`` when the model has no private values
    nor extra fields."""
    if (
        model.__pydantic_extra__ is not None
        or getattr(model, "__pydantic_private__", None) is not None
    ):
        return model.model_copy(update=updates)
    cls = type(model)
    fields = model.__dict__.copy()
    fields.update(updates)
    copied = cls.__new__(cls)
    _setattr(copied, "__dict__", fields)
    _setattr(copied, "__pydantic_fields_set__", model.__pydantic_fields_set__ | updates.keys())
    _setattr(copied, "__pydantic_extra__", None)
    _setattr(copied, "__pydantic_private__", None)
    return copied
