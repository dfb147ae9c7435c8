# SPDX-License-Identifier: GPL-2.0-or-later
"""The source tree keeps the shape doc/ARCHITECTURE.md draws.

fpmd/ is cut into folders by role (feeds -> RIB -> map writer, the
kernel watcher beside them, the API on top). These checks read the
sources only (no build): the folders include each other without a
cycle, every fpmd include names its folder, and no unit grows past the
size a reader takes in at once unless it is listed below with why.
"""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "fpmd")
# The top folder holds the daemon itself (main.c, the event loop).
TOP = "."
# Built apart (FRR's headers and flags), and not part of fpmd's graph.
APART = {"zebra-plugin"}
# The layers, top first (doc/ARCHITECTURE.md): a folder includes only
# folders after it. fpmctl (cli) and the zebra plugin use common/ only.
LAYERS = [TOP, "api", "feed", "kernel", "rib", "fib", "conf", "common"]
SIDE = {"cli": {"common"}}
MAX_LINES = 600
# Units over MAX_LINES that are one concept and read better whole.
LONG_UNITS = {}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def units(apart=False):
    for dirpath, dirs, files in os.walk(SRC):
        dirs[:] = sorted(d for d in dirs if apart or d not in APART)
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(dirpath, f), SRC)


def folder(rel):
    return os.path.dirname(rel) or TOP


def include_edges():
    """(from folder, to folder, unit, include) for every include of
    another folder's header; unknown headers are generated or system."""
    edges, unqualified = [], []
    for u in units():
        with open(os.path.join(SRC, u)) as f:
            text = f.read()
        for h in INCLUDE.findall(text):
            if os.path.exists(os.path.join(SRC, h)):
                dst = folder(h)
            elif os.path.exists(os.path.join(SRC, folder(u), h)) and \
                    folder(u) != TOP:
                unqualified.append((u, h))
                continue
            else:
                continue
            if dst != folder(u):
                edges.append((folder(u), dst, u, h))
    return edges, unqualified


def find_cycle(graph):
    """A cycle in graph {node: set(nodes)} as a list of nodes, or None."""
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def test_find_cycle_finds_one():
    # The checker itself: a cycle through three folders is found, a
    # diamond is not one.
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == \
        ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}}) is None


def test_folders_include_each_other_without_a_cycle():
    edges, _ = include_edges()
    graph = {}
    for src, dst, _, _ in edges:
        graph.setdefault(src, set()).add(dst)
    cycle = find_cycle(graph)
    if cycle:
        why = []
        for a, b in zip(cycle, cycle[1:]):
            via = sorted({f"{u} includes {h}" for s, d, u, h in edges
                          if s == a and d == b})
            why.append(f"{a} -> {b}: " + "; ".join(via[:3]))
        pytest.fail("include cycle between folders of fpmd/:\n  " +
                    "\n  ".join(why))


def test_includes_point_down_the_layers():
    edges, _ = include_edges()
    bad = []
    for src, dst, u, h in edges:
        if src in SIDE:
            ok = dst in SIDE[src]
        elif src in LAYERS and dst in LAYERS:
            ok = LAYERS.index(dst) > LAYERS.index(src)
        else:
            ok = False
        if not ok:
            bad.append(f'{u}: #include "{h}": {src}/ may not use {dst}/')
    assert not bad, ("includes against the layers of doc/ARCHITECTURE.md "
                     "(" + " > ".join(LAYERS) + "):\n  " + "\n  ".join(bad))


def test_includes_name_their_folder():
    # "rib/rib.h", not "rib.h": the folder a unit depends on shows in
    # the include, and the graph above sees it.
    _, unqualified = include_edges()
    assert not unqualified, "\n".join(
        f'{u}: #include "{h}" should be "{folder(u)}/{h}"'
        for u, h in unqualified)


def test_units_stay_small():
    big = []
    for u in units(apart=True):
        with open(os.path.join(SRC, u)) as f:
            n = sum(1 for _ in f)
        if n > MAX_LINES and u not in LONG_UNITS:
            big.append(f"{u}: {n} lines")
    assert not big, (f"units over {MAX_LINES} lines (split them, or "
                     "list them in LONG_UNITS with why):\n  " +
                     "\n  ".join(big))


def test_long_units_listed_still_exist_and_are_long():
    for u, why in LONG_UNITS.items():
        path = os.path.join(SRC, u)
        assert os.path.exists(path), f"LONG_UNITS lists {u}, gone"
        with open(path) as f:
            n = sum(1 for _ in f)
        assert n > MAX_LINES, f"{u} is {n} lines now: drop it from LONG_UNITS"
        assert why, f"{u}: say why it reads better whole"


MAP_WRITE = re.compile(r"\bbpf_map_(update|delete)_(elem|batch)\b")


def test_only_fib_writes_maps():
    # The one-writer rule (doc/ARCHITECTURE.md): every map write goes
    # through fib/, so a route cannot reach the fast path half-written.
    bad = []
    for u in units():
        if folder(u) == "fib":
            continue
        with open(os.path.join(SRC, u)) as f:
            for n, line in enumerate(f, 1):
                if MAP_WRITE.search(line):
                    bad.append(f"{u}:{n}: {line.strip()}")
    assert not bad, ("map writes outside fpmd/fib/ (call maps_* "
                     "instead):\n  " + "\n  ".join(bad))
