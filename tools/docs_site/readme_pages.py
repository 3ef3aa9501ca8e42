"""MkDocs hook: the site's home page is README.md and its changelog CHANGELOG.md, as
they are in the repository (written once), their links into docs/ made site links."""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

REPO = Path(__file__).resolve().parents[2]
PAGES = {"index.md": "README.md", "changelog.md": "CHANGELOG.md"}


def site_markdown(text: str) -> str:
    """``](docs/engine.md)`` → ``](engine.md)``; ``](CHANGELOG.md)`` → ``](changelog.md)``."""
    text = re.sub(r"\]\(docs/", "](", text)
    return text.replace("](CHANGELOG.md)", "](changelog.md)")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for page, source in PAGES.items():
        content = site_markdown((REPO / source).read_text())
        files.append(File.generated(config, page, content=content))
    return files
