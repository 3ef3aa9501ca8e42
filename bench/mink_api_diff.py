"""What of mink 1.3.0's public API posekit lacks: names, signatures, attribute shapes.

``import posekit as mink`` should work for code written against mink 1.3.0. This
script walks every public module ``import mink`` loads (``mink``, ``mink.lie``,
``mink.tasks``, ``mink.limits``, ``mink.utils``, ``mink.constants``,
``mink.exceptions``, ``mink.configuration`` and their submodules such as
``mink.limits.collision_avoidance_limit``), reaches posekit's counterpart by the same
attribute path from ``posekit``, and reports:

- **import**: a module mink's import statements name (``from mink.tasks.frame_task
  import FrameTask``) that ``import posekit.tasks.frame_task`` does not give;
- **name**: a public name a mink module defines or re-exports that posekit's lacks;
- **signature**: a call mink accepts that posekit would not (a parameter missing,
  at another position, not keyword-capable, without mink's default), or a method
  that is a classmethod in one and not the other;
- **value**: a constant with another value;
- **attribute**: on objects built the same way with both libraries (configuration,
  every task, every limit, SO3/SE3), a public attribute that is missing or has
  another shape (``None`` vs array, array shape and dtype kind, scalar type).

Differences posekit keeps on purpose are in :data:`ALLOWED`, each with its reason
(the README's "Differences from mink" lists them). Prints every gap; exits 1 when a
gap is not allowed or an allowed gap no longer exists.

    python bench/mink_api_diff.py            # needs mink==1.3.0 (pip install -e '.[dev]')
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
import textwrap
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import mujoco
import numpy as np
from mink_api_probes import PROBE_XML, probes, shape_of

REFERENCE_VERSION = "1.3.0"

# Deliberate differences: key (as printed) -> why posekit differs.
ALLOWED: dict[str, str] = {
    "signature mink.lie.so3.SO3.__init__": (
        "SO3 and SE3 are slotted classes, not frozen dataclasses: the group dimensions "
        "(matrix_dim, parameters_dim, tangent_dim, space_dim) are class constants, not "
        "constructor fields"
    ),
    "signature mink.lie.se3.SE3.__init__": "as SO3",
}


@dataclass(frozen=True)
class Gap:
    """One thing mink has that posekit lacks (or has differently)."""

    key: str
    detail: str

    def __str__(self) -> str:
        return f"{self.key}: {self.detail}"


# ----------------------------------------------------------------- modules
def public_modules(root: ModuleType) -> list[str]:
    """Public modules loaded by ``import <root>`` and reachable by attribute from it."""
    names = sorted(
        name
        for name in list(sys.modules)
        if (name == root.__name__ or name.startswith(root.__name__ + "."))
        and not any(part.startswith("_") for part in name.split("."))
    )
    return [name for name in names if resolve(root, name.split(".")[1:]) is sys.modules[name]]


def resolve(root: object, path: list[str]) -> Any:
    """``root.a.b.c`` for ``path = [a, b, c]``, or ``None`` when a link is missing."""
    value: Any = root
    for part in path:
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


def defined_names(module: ModuleType) -> list[str]:
    """Public names a module defines at top level or re-exports (``from x import y as y``)."""
    tree = ast.parse(inspect.getsource(module))
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names += [alias.name for alias in node.names if alias.asname == alias.name]
    return [name for name in dict.fromkeys(names) if not name.startswith("_")]


# -------------------------------------------------------------- signatures
def signature_gaps(reference: Callable[..., Any], candidate: Callable[..., Any]) -> list[str]:
    """Why a call that ``reference`` accepts may fail or differ with ``candidate``."""
    try:
        ref_sig = inspect.signature(reference)
        own_sig = inspect.signature(candidate)
    except (TypeError, ValueError):
        return []
    ref_params = [p for p in ref_sig.parameters.values() if p.name not in ("self", "cls")]
    own_params = [p for p in own_sig.parameters.values() if p.name not in ("self", "cls")]
    own_by_name = {p.name: p for p in own_params}
    own_kinds = {p.kind for p in own_params}
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    own_positional = [p.name for p in own_params if p.kind in positional]
    problems: list[str] = []
    for index, param in enumerate(ref_params):
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            if param.kind not in own_kinds:
                problems.append(f"no {param.kind.description} parameter")
            continue
        own = own_by_name.get(param.name)
        if own is None:
            problems.append(f"parameter {param.name!r} missing")
            continue
        if param.kind in positional and (
            index >= len(own_positional) or own_positional[index] != param.name
        ):
            problems.append(f"parameter {param.name!r} not at position {index}")
        if param.kind in keyword and own.kind not in keyword:
            problems.append(f"parameter {param.name!r} not keyword-capable")
        if param.default is not inspect.Parameter.empty:
            if own.default is inspect.Parameter.empty:
                problems.append(f"parameter {param.name!r} has no default")
            elif not _same_value(param.default, own.default):
                problems.append(
                    f"parameter {param.name!r} defaults to {own.default!r}, "
                    f"mink's to {param.default!r}"
                )
    ref_names = {p.name for p in ref_params}
    for own in own_params:
        if (
            own.name not in ref_names
            and own.default is inspect.Parameter.empty
            and own.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ):
            problems.append(f"extra required parameter {own.name!r}")
    return problems


def _same_value(a: object, b: object) -> bool:
    if _is_alias(a) and _is_alias(b):
        return _alias_key(a) == _alias_key(b)
    try:
        equal = a == b
        return bool(np.all(equal)) if isinstance(equal, np.ndarray) else bool(equal)
    except Exception:  # values that refuse comparison
        return a is b


# ----------------------------------------------------------------- classes
_LITERALS = (int, float, str, bytes, tuple, frozenset, type(None))


def _binding(cls: type, name: str) -> str:
    """How ``cls.name`` is bound: classmethod, staticmethod, property, method or value."""
    raw = inspect.getattr_static(cls, name)
    if isinstance(raw, classmethod):
        return "classmethod"
    if isinstance(raw, staticmethod):
        return "staticmethod"
    if isinstance(raw, property):
        return "property"
    return "method" if inspect.isfunction(raw) else "value"


def _reference_members(cls: type, root: str) -> list[str]:
    """Public members ``cls`` defines in the reference package (inherited ones included)."""
    names: list[str] = []
    for klass in cls.__mro__:
        if not getattr(klass, "__module__", "").startswith(root):
            continue
        names += [n for n in vars(klass) if not n.startswith("_") or n == "__init__"]
    return list(dict.fromkeys(names))


def class_gaps(path: str, reference: type, candidate: object, root: str) -> Iterator[Gap]:
    """Gaps between a reference class and posekit's class of the same name."""
    if not isinstance(candidate, type):
        yield Gap(f"name {path}", f"is a {type(candidate).__name__} in posekit, a class in mink")
        return
    for member in _reference_members(reference, root):
        member_path = f"{path}.{member}"
        if member == "__init__":
            problems = signature_gaps(reference, candidate)
            if problems:
                yield Gap(f"signature {member_path}", "; ".join(problems))
            continue
        if not hasattr(candidate, member):
            if member in getattr(reference, "__dataclass_fields__", {}):
                continue  # an instance field: compared on instances
            yield Gap(f"name {member_path}", "missing")
            continue
        ref_binding, own_binding = _binding(reference, member), _binding(candidate, member)
        if ref_binding == "value":
            ref_value = inspect.getattr_static(reference, member)
            if isinstance(ref_value, _LITERALS) and not _same_value(
                ref_value, getattr(candidate, member)
            ):
                yield Gap(
                    f"value {member_path}",
                    f"{getattr(candidate, member)!r} in posekit, {ref_value!r} in mink",
                )
            continue
        if {ref_binding, own_binding} & {"classmethod", "staticmethod"} and (
            ref_binding != own_binding
        ):
            yield Gap(
                f"signature {member_path}", f"{own_binding} in posekit, {ref_binding} in mink"
            )
            continue
        if ref_binding == "property" or own_binding == "property":
            continue
        problems = signature_gaps(getattr(reference, member), getattr(candidate, member))
        if problems:
            yield Gap(f"signature {member_path}", "; ".join(problems))


# ----------------------------------------------------------------- modules
def import_gaps(module_names: list[str]) -> Iterator[Gap]:
    """mink's import statements with posekit's name: ``import posekit.tasks.frame_task``
    (and so ``from posekit.tasks.frame_task import FrameTask``) must import the module
    that ``posekit.tasks.frame_task`` names by attribute, for every public mink module."""
    posekit = importlib.import_module("posekit")
    for name in module_names:
        own = "posekit" + name.removeprefix("mink")
        try:
            imported = importlib.import_module(own)
        except ImportError as error:
            yield Gap(f"import {name}", f"import {own} fails: {error}")
            continue
        if imported is not resolve(posekit, own.split(".")[1:]):
            yield Gap(f"import {name}", f"import {own} gives another module than posekit.{own[8:]}")


def module_gaps(
    reference: ModuleType, candidate: ModuleType | None, prefix: str, seen: set[str]
) -> Iterator[Gap]:
    """Gaps between one reference module and posekit's module at the same path.

    Every path must exist; a class or function re-exported under several paths is
    compared once, under its defining module's name (``seen`` holds those names).
    """
    name = reference.__name__
    if not isinstance(candidate, ModuleType):
        yield Gap(f"module {name}", f"posekit has no module {prefix}{name.partition('.')[2]}")
        return
    root = name.split(".")[0]
    for attr in defined_names(reference):
        path = f"{name}.{attr}"
        ref_value = getattr(reference, attr)
        if not hasattr(candidate, attr):
            yield Gap(f"name {path}", "missing")
            continue
        own_value = getattr(candidate, attr)
        if isinstance(ref_value, ModuleType):
            continue  # compared as a module of its own
        canonical = _canonical(ref_value, path)
        if canonical in seen:
            continue
        seen.add(canonical)
        if isinstance(ref_value, type):
            yield from class_gaps(canonical, ref_value, own_value, root)
        elif callable(ref_value) and not _is_alias(ref_value):
            problems = signature_gaps(ref_value, own_value)
            if problems:
                yield Gap(f"signature {canonical}", "; ".join(problems))
        elif not _same_value(ref_value, own_value):
            yield Gap(f"value {path}", f"{own_value!r} in posekit, {ref_value!r} in mink")


def _canonical(value: object, path: str) -> str:
    """``module.qualname`` of a class or function, else the path it was reached by."""
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and not _is_alias(value):
        return f"{module}.{qualname}"
    return path


def _alias_key(value: object) -> object:
    """A typing alias by structure: ``typing.Sequence[int]`` equals ``abc.Sequence[int]``."""
    origin = typing.get_origin(value)
    if origin is None:
        return value
    args = tuple(_alias_key(arg) for arg in typing.get_args(value))
    if origin in (typing.Union, types.UnionType):
        return ("union", frozenset(args))
    return (origin, args)


def _is_alias(value: object) -> bool:
    """A typing alias (``int | str``, ``Sequence[int]``): compared by value."""
    return type(value).__module__ in ("typing", "types") and not inspect.isroutine(value)


# ---------------------------------------------------------- attribute shapes
def attribute_gaps(reference: ModuleType, candidate: ModuleType) -> Iterator[Gap]:
    """Public instance attributes of the probes mink has that posekit lacks or shapes differently."""
    model = mujoco.MjModel.from_xml_string(PROBE_XML)
    ours = probes(candidate, model)
    for label, ref_obj in probes(reference, model).items():
        own_obj = ours[label]
        names = [n for n in getattr(ref_obj, "__dict__", {}) if not n.startswith("_")]
        names += [
            n
            for n in dir(type(ref_obj))
            if not n.startswith("_") and isinstance(inspect.getattr_static(ref_obj, n), property)
        ]
        for name in dict.fromkeys(names):
            key = f"attribute mink.{label}.{name}"
            if not hasattr(own_obj, name):
                yield Gap(key, "missing")
                continue
            ref_shape, own_shape = (
                shape_of(getattr(ref_obj, name)),
                shape_of(getattr(own_obj, name)),
            )
            if ref_shape != own_shape:
                yield Gap(key, f"{own_shape} in posekit, {ref_shape} in mink")


# -------------------------------------------------------------------- main
def gaps() -> list[Gap]:
    """Every gap between mink (must be the reference version) and posekit."""
    mink = importlib.import_module("mink")
    posekit = importlib.import_module("posekit")
    version = _installed_version("mink")
    if version != REFERENCE_VERSION:
        raise RuntimeError(f"mink {REFERENCE_VERSION} is the reference, found {version}")
    found: list[Gap] = list(import_gaps(public_modules(mink)))
    seen: set[str] = set()
    for name in public_modules(mink):
        path = name.split(".")[1:]
        found += module_gaps(sys.modules[name], resolve(posekit, path), "posekit.", seen)
    found += attribute_gaps(mink, posekit)
    return list(dict.fromkeys(found))


def _installed_version(distribution: str) -> str:
    from importlib.metadata import version

    return version(distribution)


def report(found: list[Gap]) -> tuple[list[Gap], list[str]]:
    """The gaps not allowed, and the allowed keys that are no gap any more."""
    unexpected = [gap for gap in found if gap.key not in ALLOWED]
    stale = sorted(set(ALLOWED) - {gap.key for gap in found})
    return unexpected, stale


def main() -> int:
    found = gaps()
    unexpected, stale = report(found)
    for gap in found:
        reason = ALLOWED.get(gap.key)
        print(f"{'allowed' if reason else 'MISSING':8} {gap}")
        if reason:
            print(textwrap.indent(textwrap.fill(reason, 88), " " * 11))
    for key in stale:
        print(f"{'STALE':8} {key}: allowed but no longer a difference")
    print(f"{len(found)} differences, {len(unexpected)} not allowed, {len(stale)} stale allowances")
    return 1 if unexpected or stale else 0


if __name__ == "__main__":
    sys.exit(main())
