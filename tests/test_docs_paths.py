"""Every file path README.md and docs/ name exists — in backticks, in a fenced command, or in
prose — so a move or a removal that forgets the docs fails `make test` instead of misleading
the next reader (issue 16: `bench/paper002.py` outlived its file by days).

Run alone it lists every stale path: `python tests/test_docs_paths.py`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Backticked spans in the text; in a fenced block, every word (commands name scripts too).
SPAN = re.compile(r"`([^`\n]+)`")
WORD = re.compile(r"[^\s`'\"(),;]+")
FENCE = re.compile(r"^\s*```")
# What a build or a run makes, not the repository.
GENERATED = re.compile(r"(^|/)(\.state|\.venv[^/]*|artifacts|bench-results|target|build|dist)(/|$)")
# In prose, a repository path without backticks ("see docs/presets.md"): a top folder, a file.
PROSE = re.compile(
    r"(?<![\w/.`-])((?:api|bench|client|docs|infra|migrations|services|simulator|tests|worker)/[\w./-]*\.(?:py|rs|md|json|toml|yml|yaml|html|js|css|svg))\b"
)
# A placeholder or a pattern, not one file.
PLACEHOLDER = re.compile(r"[{}<>*…|?$%]|NNN|\dX\b|\.\.\.")


def doc_files() -> list[Path]:
    """README.md and every Markdown page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def candidates(text: str) -> list[tuple[int, str]]:
    """(line number, text) of every backticked span, every word of a fenced block and every
    file path of ours in prose that reads as a relative path with a folder (`a/b`). Bare names
    (`dumbbell.py`) are not checked: the docs name files of ns-3, ns-2 and the peers that way."""
    out: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        spans = WORD.findall(line) if fenced else SPAN.findall(line) + PROSE.findall(SPAN.sub("", line))
        for span in spans:
            path = re.sub(r":\d+(-\d+)?$", "", span.strip().split("::")[0].rstrip(",.;:"))
            if not path or any(c in path for c in " =") or "://" in path or path.startswith(("/", "-", "~", ".")):
                continue
            if PLACEHOLDER.search(path) or GENERATED.search(path):
                continue
            if "/" in path.rstrip("/"):
                out.append((number, path))
    return out


def _tracked() -> set[str]:
    """Files and folders of the repository (tracked or new: a doc may name one before commit);
    outside a git checkout, the tree on disk less what a build or a run makes."""
    try:
        names = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        names = []
        for folder, subfolders, files in os.walk(ROOT):
            here = Path(folder).relative_to(ROOT)
            subfolders[:] = [d for d in subfolders if d != ".git" and not GENERATED.search(str(here / d))]
            names += [str(here / f) for f in files]
    folders = {str(Path(*Path(n).parts[:i])) for n in names for i in range(1, len(Path(n).parts))}
    return set(names) | folders


def is_ours(path: str, tracked: set[str]) -> bool:
    """Whether `path` starts with a folder of the repository (`Agent/TCP`, `mher/flower` or
    `include/net/tcp.h` name ns-2 classes, images and other projects' files)."""
    first = path.split("/")[0]
    return any(t == first or t.endswith("/" + first) for t in tracked)


def resolves(path: str, doc: Path, tracked: set[str]) -> bool:
    """Whether `path` names a repository file or folder: from the root, from the doc's own
    folder, or as the tail of one (docs say `core/tests` for `simulator/core/tests`)."""
    path = path.rstrip("/")
    here = str(doc.parent.relative_to(ROOT))
    bases = ["", here + "/" if here != "." else ""]
    if path in tracked or any(b + path in tracked for b in bases):
        return True
    return any(t.endswith("/" + path) for t in tracked)


def stale_paths() -> list[str]:
    """`doc:line: path` for every backticked path that names no file of the repository."""
    tracked = _tracked()
    out = []
    for doc in doc_files():
        for number, path in candidates(doc.read_text(encoding="utf-8")):
            if is_ours(path, tracked) and not resolves(path, doc, tracked):
                out.append(f"{doc.relative_to(ROOT)}:{number}: {path}")
    return out


def test_every_file_path_the_readme_and_docs_name_exists_in_the_repository() -> None:
    stale = stale_paths()
    assert not stale, "paths named in the docs that do not exist:\n" + "\n".join(stale)


def test_the_checker_finds_a_removed_file_and_skips_placeholders_and_outputs() -> None:
    text = (
        "run `bench/paper002.py`, see `docs/simulator.md`, `/v1/runs/{id}`, `.state/admin-token`, `x.py`\n"
        "as services/presets/paper003.py says (a client/server pair)\n"
        "```\n.venv/bin/python bench/paper004.py --markdown bench-results/paper004.md\n```\n"
    )
    found = [p for _, p in candidates(text)]
    assert found == ["bench/paper002.py", "docs/simulator.md", "services/presets/paper003.py", "bench/paper004.py"]
    tracked = _tracked()
    assert not resolves("bench/paper002.py", ROOT / "README.md", tracked)
    assert resolves("docs/simulator.md", ROOT / "README.md", tracked)


def test_the_readme_points_to_the_design_in_the_repository_not_outside_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "../shared/DESIGN.md" not in readme
    assert "docs/design.md" in readme and (ROOT / "docs/design.md").is_file()
    assert "docs/architecture.md" in readme and (ROOT / "docs/architecture.md").is_file()


if __name__ == "__main__":
    hits = stale_paths()
    print("\n".join(hits) or "no stale paths")
    sys.exit(1 if hits else 0)
