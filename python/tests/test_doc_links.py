"""Every relative link of README.md, python/README.md and docs/ (Markdown links and images)
names a file or folder of the repository, and every #anchor into a Markdown file names one of
its headings (GitHub's rule: lower case, punctuation dropped, spaces as hyphens)."""

import pathlib
import re

ROOT = pathlib.Path(__file__).parents[2]
PAGES = [ROOT / "README.md", ROOT / "python" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def prose(path):
    """The page's lines outside fenced code blocks."""
    inside = False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            inside = not inside
        elif not inside:
            yield line


def anchors(path):
    return {re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in prose(path) if line.startswith("#")}


def broken_links(page):
    for line in prose(page):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # http:, https:, mailto:
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists():
                yield f"{page.relative_to(ROOT)}: {target} (no such file)"
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                yield f"{page.relative_to(ROOT)}: {target} (no such heading)"


def test_every_relative_link_resolves():
    broken = [b for page in PAGES for b in broken_links(page)]
    assert not broken, "\n".join(broken)
