# SPDX-License-Identifier: GPL-2.0-or-later
"""The documentation points at things that exist: every relative link in
README.md and doc/*.md (and the plugin's README) names a file of the
repository, and an anchor a heading of it; every repository path in their
code blocks exists (or is built from a source of that name), so does
every source file their prose names, a script run
directly is executable, and the commands can be run in order
on one machine (no `mkdir` that fails because an earlier step made the
directory); the README opens with the demo and the test command, and
its configuration examples are valid fpmd configurations."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import pytest

from lib.lab import FPMD, REPO

DOCS = sorted(["README.md", "fpmd/zebra-plugin/README.md"] +
              [os.path.relpath(p, REPO)
               for p in glob.glob(os.path.join(REPO, "doc", "*.md"))])

# Top-level directories of the repository: a word in a code block that
# starts with one of them is a path into the repository.
TOPDIRS = ("scripts", "tests", "doc", "yang", "proto", "fpmd", "bpf",
           "debian", ".ci")
# What the build makes from a source of another name (X from X.c, ...).
BUILT_FROM = (".c", ".in", ".bpf.c")

FENCE = re.compile(r"^(```|~~~)")
INLINE_LINK = re.compile(
    r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REF_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
MKDIR = re.compile(r"(?:^|[;&|(]\s*)mkdir((?:\s+-\S+)*)\s")
INLINE_CODE = re.compile(r"`[^`\n]*`")
PATH_WORD = re.compile(
    r"(?<![\w./-])(?:\./)?((?:%s)/[\w.+/-]*[\w/])" %
    "|".join(re.escape(d) for d in TOPDIRS))


def read(rel):
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        return f.read()


def split_fences(text, with_info=False):
    """(prose lines, code blocks): each block a list of (line number, line);
    with_info, each block is (info string, lines)."""
    prose, blocks, block, info = [], [], None, ""
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line.lstrip())
        if m:
            if block is None:
                block, info = [], line.lstrip()[3:].strip()
            else:
                blocks.append((info, block) if with_info else block)
                block = None
            continue
        if block is None:
            prose.append((n, line))
        else:
            block.append((n, line))
    return prose, blocks


def slug(heading):
    """GitHub's anchor for a heading."""
    s = re.sub(r"[`*_]", "", heading.strip().lower())
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(rel):
    prose, _ = split_fences(read(rel))
    seen, out = {}, set()
    for _, line in prose:
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        s = slug(m.group(1))
        k = seen.get(s, 0)
        seen[s] = k + 1
        out.add(s if k == 0 else f"{s}-{k}")
    return out


def links(rel):
    prose, _ = split_fences(read(rel))
    for n, line in prose:
        line = INLINE_CODE.sub("", line)
        for m in INLINE_LINK.finditer(line):
            yield n, m.group(1)
        m = REF_LINK.match(line)
        if m:
            yield n, m.group(1)


def link_problem(rel, target):
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
        return None  # a URL: not checked here (no network in tests)
    path, _, anchor = target.partition("#")
    if path:
        full = os.path.normpath(os.path.join(REPO, os.path.dirname(rel), path))
        if os.path.relpath(full, REPO).startswith(".."):
            return "points outside the repository"
        if not os.path.exists(full):
            return "no such file"
        dest = os.path.relpath(full, REPO)
    else:
        dest = rel
    if anchor and dest.endswith(".md") and anchor not in anchors(dest):
        return f"no heading with anchor #{anchor} in {dest}"
    return None


@pytest.mark.parametrize("doc", DOCS)
def test_relative_links_exist(doc):
    bad = []
    for n, target in links(doc):
        why = link_problem(doc, target)
        if why:
            bad.append(f"{doc}:{n}: link {target}: {why}")
    assert not bad, "\n".join(bad)


def repo_path_exists(path):
    full = os.path.join(REPO, path.rstrip("/"))
    if os.path.exists(full):
        return True
    # protoc's Python module: proto/fpmd_pb2.py from proto/fpmd.proto.
    if full.endswith("_pb2.py") and os.path.exists(full[:-7] + ".proto"):
        return True
    stem = re.sub(r"\.(o|so)$", "", full)
    return any(os.path.exists(stem + ext) for ext in BUILT_FROM)


@pytest.mark.parametrize("doc", DOCS)
def test_code_blocks_name_existing_files(doc):
    _, blocks = split_fences(read(doc))
    bad = []
    for block in blocks:
        for n, line in block:
            for m in PATH_WORD.finditer(line):
                path = m.group(1)
                if not repo_path_exists(path):
                    bad.append(f"{doc}:{n}: {path}: not in the repository "
                               "and not built from a source of that name")
            # A script run directly must be executable.
            cmd = re.match(r"^\s*(?:\w+=\S+\s+)*(?:\./)?((?:%s)/\S+)" %
                           "|".join(re.escape(d) for d in TOPDIRS), line)
            if cmd and os.path.isfile(os.path.join(REPO, cmd.group(1))) and \
                    not os.access(os.path.join(REPO, cmd.group(1)), os.X_OK):
                bad.append(f"{doc}:{n}: {cmd.group(1)} is run directly "
                           "but is not executable")
    assert not bad, "\n".join(bad)


# Sources named in prose (`fpmd/rib/route.c`): they follow the code
# when it moves. The man pages are prose too.
SOURCE_PATH = re.compile(r"\.(c|h|py|md|sh|yang|proto)$")
PROSE_DOCS = DOCS + sorted(os.path.relpath(p, REPO) for p in
                           glob.glob(os.path.join(REPO, "doc", "*.8.in")))


@pytest.mark.parametrize("doc", PROSE_DOCS)
def test_sources_named_in_prose_exist(doc):
    prose, _ = split_fences(read(doc))
    bad = []
    for n, line in prose:
        for m in PATH_WORD.finditer(line):
            path = m.group(1)
            if SOURCE_PATH.search(path) and not repo_path_exists(path):
                bad.append(f"{doc}:{n}: {path}: no such file")
    assert not bad, "\n".join(bad)


def test_readme_commands_run_in_order():
    """The README's commands are meant to be run one after the other on
    one machine: the demo builds ./build, so a later `mkdir build` would
    fail. Every mkdir in them must tolerate an existing directory."""
    _, blocks = split_fences(read("README.md"))
    bad = []
    for block in blocks:
        for n, line in block:
            code = line.split("#", 1)[0]
            for m in MKDIR.finditer(code):
                if "p" not in m.group(1):
                    bad.append(f"README.md:{n}: `mkdir` without -p: "
                               f"{line.strip()}")
    assert not bad, "\n".join(bad)


def test_readme_opens_with_demo_and_tests():
    """The first commands a reader meets: the demo and the whole test suite
    (what CI runs), before any section."""
    text = read("README.md")
    head = text.split("\n## ", 1)[0]
    _, blocks = split_fences(head)
    assert blocks, "README.md: no code block before the first section"
    first = " ".join(line for _, line in blocks[0])
    for cmd in ("scripts/demo.sh", "scripts/test.sh"):
        assert cmd in first, f"README.md: {cmd} not in the first code block"
    with open(os.path.join(REPO, ".ci", "run"), encoding="utf-8") as f:
        assert "scripts/test.sh" in f.read(), \
            ".ci/run no longer runs scripts/test.sh, which the README names"


def test_readme_configuration_examples_are_valid():
    """Every fpmd configuration the README shows passes `fpmd -C`."""
    if not os.access(FPMD, os.X_OK):
        pytest.fail(f"{FPMD} not built (run make first)")
    _, blocks = split_fences(read("README.md"), with_info=True)
    examples = [(lines[0][0], "\n".join(line for _, line in lines))
                for info, lines in blocks
                if info == "json" and
                "fpmd:fpmd" in " ".join(l for _, l in lines)]
    assert examples, "README.md: no fpmd configuration example found"
    bad = []
    for n, text in examples:
        try:
            json.loads(text)
        except ValueError as e:
            bad.append(f"README.md:{n}: not JSON: {e}")
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write(text)
            f.flush()
            r = subprocess.run([FPMD, "-C", "-f", f.name], capture_output=True,
                               text=True, timeout=60)
        if r.returncode != 0:
            # fpmd names the line in the file: say which README line it is.
            msg = re.sub(re.escape(f.name) + r":(\d+):",
                         lambda m: f"README.md:{n + int(m.group(1)) - 1}:",
                         r.stderr.strip() or r.stdout.strip())
            bad.append(f"README.md:{n}: fpmd -C refuses this example: {msg}")
    assert not bad, "\n".join(bad)


# The checks above pass vacuously if the parsing goes wrong: the parsing,
# on inputs whose answer is known.
LINK_CASES = [
    ("[a](doc/x.md)", ["doc/x.md"]),
    ("[a](doc/x.md#sec) and ![img](p.png \"title\")",
     ["doc/x.md#sec", "p.png"]),
    ("`[not](a link)` in code", []),
    ("[ref]: doc/y.md", ["doc/y.md"]),
]
PROBLEM_CASES = [
    ("../shared/DESIGN.md", "points outside the repository"),
    ("doc/no-such-file.md", "no such file"),
    ("doc/design.md#no-such-heading", "no heading with anchor"),
    ("doc/design.md#the-picture", None),
    ("https://example.org/x", None),
]
SLUG_CASES = [
    ("What XDP would bypass, and what fpmd does",
     "what-xdp-would-bypass-and-what-fpmd-does"),
    ("FRR: the FPM feed", "frr-the-fpm-feed"),
    ("The `fpmctl` tool", "the-fpmctl-tool"),
]


@pytest.mark.parametrize("line,want", LINK_CASES)
def test_link_parsing(line, want, tmp_path, monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "REPO", str(tmp_path))
    (tmp_path / "x.md").write_text(line + "\n")
    assert [t for _, t in links("x.md")] == want


@pytest.mark.parametrize("target,want", PROBLEM_CASES)
def test_link_problems(target, want):
    why = link_problem("README.md", target)
    if want is None:
        assert why is None, f"{target}: {why}"
    else:
        assert why and why.startswith(want), \
            f"{target}: {why!r}, want {want!r}"


@pytest.mark.parametrize("heading,want", SLUG_CASES)
def test_heading_anchor(heading, want):
    assert slug(heading) == want
