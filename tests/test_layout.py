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


# A function with external linkage: its name at the start of a line, after
# its return type, then "(" (fpmd's style puts the type on the same line).
FUNC_DEF = re.compile(r"^(?!static\b)(?:[a-z_]\w*[ \t*]+)+\**([a-z_]\w*)\(",
                      re.M)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def defined_functions():
    """{name: unit} of every function defined with external linkage."""
    defs = {}
    for u in units():
        if not u.endswith(".c"):
            continue
        with open(os.path.join(SRC, u)) as f:
            text = COMMENT.sub("", f.read())
        for m in FUNC_DEF.finditer(text):
            defs.setdefault(m.group(1), u)
    return defs


STATIC_DEF = re.compile(r"^static\b(?:[ \t]+[a-z_]\w*[ \t*]*)+?\**([a-z_]\w*)\(",
                        re.M)


def calls_up(u, text, defs):
    """The functions of defs, defined in a folder above unit u's in LAYERS,
    that text (u's source) calls. A call through a pointer (ops->f(),
    cb.f()) is the way down and is not one, nor a call of u's own static
    function of the same name."""
    text = STRING.sub('""', COMMENT.sub("", text))
    own = set(STATIC_DEF.findall(text))
    here = LAYERS.index(folder(u))
    found = []
    for name, du in defs.items():
        d = folder(du)
        if d not in LAYERS or LAYERS.index(d) >= here or name in own:
            continue
        if re.search(r"(?<![\w.>])" + name + r"\s*\(", text):
            found.append((u, name, du))
    return found


def test_upward_calls_checker_finds_one():
    # The checker itself, on a made-up unit: a direct call up is found; a
    # call through a callback pointer, a name in a comment or a string and
    # a static function of the unit's own are not.
    defs = {"link_gone": "links.c", "out_put": "api/metrics_text.c"}
    text = ('static int out_put(int x)\n{ return x; }\n'
            'void f(void)\n{\n\tc->ops->link_gone(2); cb.link_gone(3);\n'
            '\t/* link_gone(4) */ log("link_gone(5)"); out_put(1);\n}\n')
    assert calls_up("kernel/x.c", text, defs) == []
    text += "void g(void)\n{\n\tlink_gone(1);\n}\n"
    assert calls_up("kernel/x.c", text, defs) == \
        [("kernel/x.c", "link_gone", "links.c")]


def test_no_call_points_up_the_layers():
    # An include that points up is caught above; a call can point up
    # without one (a prototype repeated by hand). Lower layers reach the
    # daemon through the callbacks it hands them (struct nl_event_ops and
    # the like).
    defs = defined_functions()
    bad = []
    for u in units():
        if u.endswith(".c") and folder(u) in LAYERS:
            with open(os.path.join(SRC, u)) as f:
                bad += calls_up(u, f.read(), defs)
    assert not bad, ("calls against the layers of doc/ARCHITECTURE.md:\n  "
                     + "\n  ".join(f"{u} calls {n}() of {du}"
                                    for u, n, du in bad))


def test_daemon_units_call_without_a_cycle():
    # Within the top folder too: the loop (loop.c) calls the units that
    # serve its events, and they reach back only through ev.c (register a
    # descriptor, ask for work after the batch) and tick.c.
    defs = {n: u for n, u in defined_functions().items()
            if folder(u) == TOP}
    graph = {}
    for u in units():
        if folder(u) != TOP or not u.endswith(".c"):
            continue
        with open(os.path.join(SRC, u)) as f:
            text = STRING.sub('""', COMMENT.sub("", f.read()))
        own = set(STATIC_DEF.findall(text))
        for name, du in defs.items():
            if du != u and name not in own and \
                    re.search(r"(?<![\w.>])" + name + r"\s*\(", text):
                graph.setdefault(u, set()).add(du)
    cycle = find_cycle(graph)
    assert cycle is None, "call cycle between the daemon's units: " + \
        " -> ".join(cycle)


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
