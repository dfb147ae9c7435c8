# SPDX-License-Identifier: GPL-2.0-or-later
"""fpmctl's output as scripts read it (fpmctl(8)).

- --json: every show and lookup prints one JSON document whose tables
  read one entry a line, as FRR's show ... json does: the outer levels
  (routes: prefix, then each route of it; counters: interface, then each
  counter; nexthops, groups, neighbors, interfaces, guards: each entry)
  each on a line of their own, indented by two spaces a level, the rest
  of an entry on that line with ", " and ": ". The expected bytes are
  rebuilt from the parsed document by that rule, so the test holds
  whatever the values are.
- A command line fpmctl cannot read is refused with exit code 2 and a
  message naming the word, and changes nothing in fpmd.
"""
import json

from lib.lab import ping

# show (or lookup) -> how many outer levels get a line per member
LAYOUT = [
    (("show", "routes"), 2),
    (("show", "routes", "172.16.101.2/32"), 2),
    (("show", "counters"), 2),
    (("show", "nexthops"), 1),
    (("show", "groups"), 1),
    (("show", "neighbors"), 1),
    (("show", "interfaces"), 1),
    (("show", "guards"), 1),
    (("show", "fpm"), 0),
    (("show", "plugin"), 0),
    (("show", "summary"), 0),
    (("lookup", "10.9.1.1"), 0),
    (("lookup", "172.16.102.1"), 0),
]


def layout(v, pretty, depth=0):
    """v written as fpmctl writes it: containers above depth pretty break
    lines."""
    if isinstance(v, dict):
        items = [json.dumps(k) + ": " + layout(x, pretty, depth + 1)
                 for k, x in v.items()]
        o, c = "{", "}"
    elif isinstance(v, list):
        items = [layout(x, pretty, depth + 1) for x in v]
        o, c = "[", "]"
    else:
        return json.dumps(v, ensure_ascii=False)
    if not items:
        return o + c
    if depth < pretty:
        ind = "\n" + "  " * (depth + 1)
        return o + ind + ("," + ind).join(items) + "\n" + "  " * depth + c
    return o + ", ".join(items) + c


def test_json_tables_read_one_entry_a_line(lab):
    d = lab.fpmd()
    lab.routes_and_neighbors(d)
    d.ctl("nexthop", "add", "10", "via", lab.H2_V4, "dev", "r1-eth1")
    d.ctl("nexthop", "add", "11", "via", lab.H1_V4, "dev", "r1-eth0")
    d.ctl("nexthop", "add", "20", "group", "10,2/11")
    d.ctl("route", "add", "10.9.0.0/16", "nhid", "20")
    d.ctl("route", "add", "10.6.0.0/16", "blackhole")
    # A prefix with two entries (the kernel's local route and one by hand).
    d.ctl("route", "add", "172.16.101.2/32", "dev", "r1-eth0")
    lab.warm_kernel_neighbors()
    ping(lab.h1, lab.H2_V4, count=2, interval=0.1)

    for args, pretty in LAYOUT:
        for argv in (("--json",) + args, args + ("json",)):
            out = d.ctl(*argv).stdout
            doc = json.loads(out)
            assert out == layout(doc, pretty) + "\n", \
                f"fpmctl {' '.join(argv)}: layout differs:\n{out}"
    # The cases hold something to lay out.
    assert len(d.show("routes", "172.16.101.2/32")["172.16.101.2/32"]) == 2
    assert len(d.show("counters")) == 2
    assert d.show("groups")["20"]["nexthops"] == [
        {"id": 10, "weight": 2}, {"id": 11, "weight": 1}]


BAD = [
    # (command line, message after "fpmctl: ")
    (["show", "bogus"], "unknown show 'bogus'"),
    (["show", "routes", "10.0.0.0/33"], None),
    (["show", "nexthops", "x"], "unexpected argument 'x'"),
    (["lookup"], "usage: lookup ADDRESS"),
    (["lookup", "x"], "bad address 'x'"),
    (["route", "add"], "usage: route add|del PREFIX ..."),
    (["route", "frob", "10.0.0.0/8"],
     "route: unknown action 'frob' (add, replace, del)"),
    (["route", "add", "10.0.0.0/8"],
     "route add: give 'via GW dev IF', 'dev IF', 'nhid ID' or a type "
     "(blackhole, unreachable, prohibit)"),
    (["route", "add", "10.0.0.0/8", "via"], "route: unexpected 'via'"),
    (["route", "add", "10.0.0.0/8", "nhid", "x"], "bad nexthop id 'x'"),
    (["route", "add", "10.0.0.0/8", "via", "1.2.3.x", "dev", "r1-eth0"],
     "bad address '1.2.3.x'"),
    (["nexthop", "add", "x"], "bad nexthop id 'x'"),
    (["nexthop", "add", "5"],
     "nexthop add: give 'via GW dev IF', 'dev IF' or 'group "
     "ID[,WEIGHT]/...'"),
    (["nexthop", "add", "5", "group", "1,x"], "bad weight 'x'"),
    (["nexthop", "add", "5", "group", "x"], "bad member id 'x'"),
    (["nexthop", "add", "5", "group", "/".join(map(str, range(1, 66)))],
     "group: at most 64 members"),
    (["neighbor", "add", "172.16.101.9", "dev", "r1-eth0"],
     "neighbor add: give 'lladdr MAC dev IF'"),
    (["neighbor", "del", "172.16.101.9"], "neighbor del: give 'dev IF'"),
    (["neighbor", "add", "172.16.101.9", "lladdr", "zz", "dev", "r1-eth0"],
     "bad MAC 'zz'"),
    (["clear", "frob"], "usage: clear counters"),
    (["reload", "now"], "usage: reload"),
]


def by_hand(d):
    """What fpmctl can change: the entries given by hand (the kernel's own
    may still arrive, as IPv6 addresses and neighbors come up)."""
    routes = {p: [e for e in es if e["source"] == "static"]
              for p, es in d.show("routes").items()}
    return ({p: es for p, es in routes.items() if es}, d.show("nexthops"),
            [n for n in d.show("neighbors") if n["source"] == "static"])


def test_unreadable_command_line_is_refused_naming_the_word(lab):
    d = lab.fpmd()
    d.ctl("route", "add", "10.9.0.0/16", "dev", "r1-eth1")
    before = by_hand(d)
    for argv, msg in BAD:
        r = d.ctl(*argv, check=False)
        assert r.returncode == 2, f"{argv}: rc {r.returncode}: {r.stderr}"
        if msg:
            assert r.stderr == f"fpmctl: {msg}\n", argv
        else:
            assert r.stderr.startswith("fpmctl: bad prefix '10.0.0.0/33'"), \
                r.stderr
        assert r.stdout == "", argv
    assert by_hand(d) == before
