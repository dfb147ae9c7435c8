# SPDX-License-Identifier: GPL-2.0-or-later
"""What a fresh machine must install, written down once and agreeing.

debian/control's Build-Depends is the list for building and packaging
(scripts/install-deps.sh installs it with `apt-get build-dep` on the
tree); scripts/frr-source.sh installs the FRR source's build
dependencies itself when run alone, so they must be Build-Depends too
(else dpkg-checkbuilddeps refuses the package on a fresh machine before
frr-source.sh ever runs); install-deps' own list holds only what the
tests, the demo and the fresh-root check run. Every name must be a
package apt knows. scripts/fresh-check.sh is the proof on a clean root;
this is the cheap check that runs in every `make check`.
"""
import os
import re
import subprocess

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_depends():
    """Package names of debian/control's Build-Depends (comments, version
    constraints, architectures and profiles removed, alternatives kept
    as their first choice)."""
    text = open(os.path.join(TOP, "debian/control")).read()
    source = text.split("\n\n")[0]
    lines = [ln for ln in source.splitlines() if not ln.startswith("#")]
    field, value = None, []
    for ln in lines:
        if ln[:1] in (" ", "\t"):
            if field == "build-depends":
                value.append(ln)
            continue
        name, _, rest = ln.partition(":")
        field = name.strip().lower()
        if field == "build-depends":
            value.append(rest)
    names = []
    for item in " ".join(value).split(","):
        first = item.split("|")[0]
        first = re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", first).strip()
        if first:
            names.append(first)
    return names


def frr_source_deps():
    text = open(os.path.join(TOP, "scripts/frr-source.sh")).read()
    m = re.search(r'^DEPS="([^"]*)"', text, re.M)
    assert m, "scripts/frr-source.sh has no DEPS=\"...\" list"
    return m.group(1).split()


def install_deps_tools():
    r = subprocess.run(["sh", os.path.join(TOP, "scripts/install-deps.sh"),
                        "--list"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_build_depends_parsed():
    deps = build_depends()
    # The parser read the whole field, comment lines and all.
    for p in ("debhelper-compat", "clang", "libbpf-dev", "frr", "gawk",
              "libreadline-dev"):
        assert p in deps, (p, deps)


# What dpkg-checkbuilddeps and apt-get build-dep add to every Build-Depends.
BUILD_ESSENTIAL = {"build-essential", "make", "gcc", "g++", "dpkg-dev",
                   "libc6-dev"}


def test_frr_source_deps_are_build_depends():
    missing = sorted(set(frr_source_deps()) - set(build_depends())
                     - BUILD_ESSENTIAL)
    assert not missing, (
        f"scripts/frr-source.sh installs {missing}, which debian/control's "
        "Build-Depends lacks: dpkg-buildpackage would refuse to start on a "
        "machine without them")


def test_install_deps_lists_each_package_once():
    tools = install_deps_tools()
    assert len(tools) == len(set(tools)), tools
    both = sorted(set(tools) & set(build_depends()))
    assert not both, (f"{both} are in debian/control's Build-Depends and "
                      "install-deps' TOOLS: keep them in Build-Depends only")


def test_every_package_exists():
    names = sorted(set(install_deps_tools()) | set(build_depends())
                   | set(frr_source_deps()))
    # debhelper-compat is a virtual package: debhelper provides it.
    names = [n for n in names if n != "debhelper-compat"]
    r = subprocess.run(["apt-cache", "policy", *names], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    known = set(re.findall(r"^(\S+):$", r.stdout, re.M))
    unknown = [n for n in names if n not in known
               or re.search(rf"^{re.escape(n)}:\n\s+Installed: \S+\n"
                            r"\s+Candidate: \(none\)", r.stdout, re.M)]
    assert not unknown, f"apt knows no candidate for {unknown}"


APT_CASES = [
    # (description, files {relative path: text}, file written, expected)
    ("deb822 (Debian 12)",
     {"sources.list.d/debian.sources":
      "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n"
      "Components: main\n"},
     "sources.list.d/debian-src.sources",
     "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n"
     "Components: main\n"),
    ("classic sources.list (debootstrap, upgrades)",
     {"sources.list":
      "# comment\ndeb http://deb.debian.org/debian bookworm main\n"
      "deb [signed-by=/k.gpg] http://security.debian.org/debian-security "
      "bookworm-security main\n"},
     "sources.list.d/debian-src.list",
     "deb-src [signed-by=/k.gpg] http://security.debian.org/debian-security "
     "bookworm-security main\n"
     "deb-src http://deb.debian.org/debian bookworm main\n"),
    ("a deb-src entry already there",
     {"sources.list": "deb http://d/debian bookworm main\n"
      "deb-src http://d/debian bookworm main\n"},
     None, None),
]


def test_frr_source_adds_debsrc(tmp_path):
    for desc, files, written, want in APT_CASES:
        etc = tmp_path / re.sub(r"\W+", "_", desc)
        (etc / "sources.list.d").mkdir(parents=True)
        for rel, text in files.items():
            (etc / rel).write_text(text)
        r = subprocess.run(["sh", os.path.join(TOP, "scripts/frr-source.sh"),
                            "--add-debsrc"], capture_output=True, text=True,
                           env={**os.environ, "FPMD_APT_ETC": str(etc)},
                           timeout=30)
        assert r.returncode == 0, (desc, r.stdout, r.stderr)
        new = sorted(str(p.relative_to(etc)) for p in etc.rglob("*")
                     if p.is_file() and str(p.relative_to(etc)) not in files)
        if written is None:
            assert new == [], (desc, new)
            continue
        assert new == [written], (desc, new)
        assert (etc / written).read_text() == want, desc
    # Nothing to copy from: a clear error.
    etc = tmp_path / "empty"
    (etc / "sources.list.d").mkdir(parents=True)
    r = subprocess.run(["sh", os.path.join(TOP, "scripts/frr-source.sh"),
                        "--add-debsrc"], capture_output=True, text=True,
                       env={**os.environ, "FPMD_APT_ETC": str(etc)},
                       timeout=30)
    assert r.returncode != 0 and "no deb line" in r.stderr, r.stderr
