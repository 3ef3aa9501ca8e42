"""MkDocs hook: ``rest-reference.md``, written at build time from the OpenAPI document
of the app (``create_app(...).openapi()``), so the reference is the server's own schema:
every route by tag with its parameters, body and answers, then every schema's fields."""

from __future__ import annotations

from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

PAGE = "rest-reference.md"
INTRO = """# REST reference

Generated from the server's OpenAPI document when the site is built; a running server
serves the same document at `/openapi.json`, with Swagger UI at `/docs` and ReDoc at
`/redoc`. The websocket stream and worked examples are in [REST and websocket](api.md).
"""


def openapi() -> dict[str, Any]:
    from posekit.app import create_app
    from posekit.settings import Settings

    return create_app(Settings.from_env({})).openapi()


def type_of(schema: dict[str, Any]) -> str:
    """A schema in a few words: ``FrameTaskSpec``, ``array of number``, ``string | null``."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name.lower()})"
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return " \\| ".join(type_of(option) for option in schema[union])
    if schema.get("type") == "array":
        return "array of " + type_of(schema.get("items", {}))
    if "const" in schema:
        return f"`{schema['const']!r}`"
    if "enum" in schema:
        return " \\| ".join(f"`{value}`" for value in schema["enum"])
    return str(schema.get("type", "any"))


def cell(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def operation(method: str, path: str, spec: dict[str, Any]) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", "", cell(spec.get("summary")) + ".", ""]
    if spec.get("description"):
        lines += [spec["description"].replace("``", "`"), ""]
    parameters = spec.get("parameters", [])
    if parameters:
        lines += [
            "| parameter | in | type | required | description |",
            "| --- | --- | --- | --- | --- |",
        ]
        for p in parameters:
            lines.append(
                f"| `{p['name']}` | {p['in']} | {type_of(p.get('schema', {}))} | "
                f"{'yes' if p.get('required') else 'no'} | {cell(p.get('description'))} |"
            )
        lines.append("")
    for media, body in spec.get("requestBody", {}).get("content", {}).items():
        lines += [f"Body ({media}): {type_of(body.get('schema', {}))}", ""]
    lines += ["| answer | description |", "| --- | --- |"]
    for status, answer in spec.get("responses", {}).items():
        lines.append(f"| {status} | {cell(answer.get('description'))} |")
    return [*lines, ""]


def schema_section(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [cell(schema["description"]), ""]
    fields = schema.get("properties", {})
    if fields:
        required = set(schema.get("required", []))
        lines += ["| field | type | required | description |", "| --- | --- | --- | --- |"]
        for field, spec in fields.items():
            lines.append(
                f"| `{field}` | {type_of(spec)} | {'yes' if field in required else 'no'} | "
                f"{cell(spec.get('description'))} |"
            )
    else:
        lines.append(f"{type_of(schema)}.")
    return [*lines, ""]


def reference(document: dict[str, Any]) -> str:
    lines = [INTRO]
    for tag in document.get("tags", []):
        lines += [f"## {tag['name'].capitalize()}", "", cell(tag.get("description")), ""]
        for path, operations in document["paths"].items():
            for method, spec in operations.items():
                if tag["name"] in spec.get("tags", []):
                    lines += operation(method, path, spec)
    lines += ["## Schemas", ""]
    for name, schema in document["components"]["schemas"].items():
        lines += schema_section(name, schema)
    return "\n".join(lines)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, PAGE, content=reference(openapi())))
    return files
