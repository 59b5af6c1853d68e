"""The project carries its own design notes: docs/design.md exists and the README links it, nothing in the
repository cites a design document from outside it, and every `docs/design.md §N` reference names a
section that exists."""
from __future__ import annotations

import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DESIGN = REPO / "docs" / "design.md"
# what the repository is made of (a virtual environment or caches in the checkout are not)
SOURCES = ("onnx2ttnn", "docs", "tests", "tools", "models", "benchmarks", ".ci", "README.md", "pyproject.toml")
SKIP_DIRS = {"__pycache__", ".pytest_cache"}
TEXT_SUFFIXES = {".py", ".md", ".txt", ".toml", ".sh", ".json", ".cfg", ".yaml", ".yml", ""}
OUTSIDE = ("DESIGN" + ".md", "/work/" + "shared")  # spelled apart so that this file does not match itself


def _text_files(*tops: str):
    for top in tops:
        path = REPO / top
        if path.is_file():
            yield path
            continue
        for folder, dirs, files in os.walk(path):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
            for name in files:
                file = Path(folder) / name
                if file.suffix in TEXT_SUFFIXES:
                    yield file


def _mentions(needle: str, *tops: str) -> list[str]:
    hits = []
    for file in _text_files(*tops):
        for number, line in enumerate(file.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if needle in line:
                hits.append(f"{file.relative_to(REPO)}:{number}: {line.strip()}")
    return hits


def _sections() -> set[str]:
    """Section numbers of docs/design.md: "3" for `## 3. ...`, "3.2" for `### 3.2 ...`."""
    text = DESIGN.read_text(encoding="utf-8")
    return set(re.findall(r"^## (\d+)\. ", text, re.M)) | set(re.findall(r"^### (\d+\.\d+) ", text, re.M))


def test_the_package_cites_no_design_document_from_outside_the_repository():
    assert _mentions(OUTSIDE[0], "onnx2ttnn") == []


def test_nothing_in_the_repository_points_outside_it():
    for needle in OUTSIDE:
        assert _mentions(needle, *SOURCES) == [], needle


def test_every_reference_to_the_design_notes_names_an_existing_section():
    sections = _sections()
    assert {"1", "2", "3", "3.2", "3.3", "4.2", "5", "6"} <= sections
    references = []
    for file in _text_files(*SOURCES):
        text = file.read_text(encoding="utf-8", errors="replace")
        references += [(file, ref) for ref in re.findall(r"docs/design\.md §(\d+(?:\.\d+)?)", text)]
    assert len(references) >= 6  # the package's own citations, at least
    assert [(str(f.relative_to(REPO)), ref) for f, ref in references if ref not in sections] == []


def test_the_design_notes_refer_to_their_own_sections_correctly():
    sections = _sections()
    text = DESIGN.read_text(encoding="utf-8")
    wrong = []
    for match in re.finditer(r"§(\d+(?:\.\d+)?)", text):
        if "ttnn-facts" in text[max(0, match.start() - 30):match.start()]:
            continue  # a section of docs/ttnn-facts.md
        if match.group(1) not in sections:
            wrong.append(text[max(0, match.start() - 40):match.end()])
    assert wrong == []


def test_the_readme_links_the_design_notes():
    assert "(docs/design.md)" in (REPO / "README.md").read_text(encoding="utf-8")
