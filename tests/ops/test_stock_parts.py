"""posekit uses other libraries through their public APIs only: no module of ``server/``
or ``frontend/`` imports another library's private module or name, reads or writes a
dunder of pydantic's, or reaches into uvicorn's protocols, websockets' internals or
multiprocessing's framing (an upgrade of any of them must not break posekit silently)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted((REPO / "server").rglob("*.py")) + sorted((REPO / "frontend").rglob("*.py"))
INTERNALS = ("uvicorn.protocols", "websockets.protocol", "websockets.frames",
             "multiprocessing.connection", "viser.infra")  # fmt: skip


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split(".")) and module != "__future__"


def _foreign_imports(tree: ast.AST) -> list[tuple[str, str]]:
    """(module, name) of every import of another library in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.module, alias.name) for alias in node.names]
    return [(m, n) for m, n in found if not m.startswith(("posekit", "posekit_viewer"))]


def test_no_private_module_or_name_of_another_library_is_imported() -> None:
    offences = []
    for path in SOURCES:
        for module, name in _foreign_imports(ast.parse(path.read_text())):
            if _private(module) or (name.startswith("_") and not name.startswith("__")):
                offences.append(f"{path.relative_to(REPO)}: {module} {name}")
            if module.startswith(INTERNALS):
                offences.append(f"{path.relative_to(REPO)}: {module} (internals)")
    assert not offences, offences


def test_no_pydantic_dunder_is_touched() -> None:
    offences = [
        f"{path.relative_to(REPO)}:{node.lineno}"
        for path in SOURCES
        for node in ast.walk(ast.parse(path.read_text()))
        if (isinstance(node, ast.Attribute) and node.attr.startswith("__pydantic"))
        or (isinstance(node, ast.Constant) and str(node.value).startswith("__pydantic"))
    ]
    assert not offences, offences
