# SPDX-License-Identifier: GPL-2.0-or-later
"""Each route's protocol, as FRR names it.

What a user relies on: fpmctl names the protocol that gave each route the
way `show ip route` does ("static", "ospf", "bgp", ...), in `show routes`
text and JSON ("protocol"; the feed that brought it is "source"), in
`lookup`, and counts routes per protocol in `show summary` and `show
state`. FPM carries the kernel's rtm_protocol: zebra sends connected and
kernel routes both as RTPROT_KERNEL, so they show as "kernel"; the plugin
feed tells "connected" from "kernel". Numbers FRR has no name for show as
the number. Routes entered with fpmctl are "fpmctl", the router's own
addresses "local".

Raw FPM frames cover every protocol number; real zebra and staticd cover
both feeds. Run:
  /usr/bin/python3 -m pytest -v tests/test_protocol.py
"""
import collections
import json

from lib.fpmwire import RT_SCOPE_LINK, fpm_keeper, frame, route
from lib.lab import wait_for

# (prefix, rtm_protocol, table, the name fpmctl shows): zebra2proto() /
# proto2zebra() of zebra/rt_netlink.c.
RAW = [
    ("10.1.0.0/24", 186, 254, "bgp"),
    ("10.2.0.0/24", 188, 254, "ospf"),
    ("2001:db8:2::/64", 188, 254, "ospf6"),
    ("10.3.0.0/24", 196, 254, "static"),
    ("10.4.0.0/24", 187, 254, "isis"),
    ("10.5.0.0/24", 2, 254, "kernel"),
    ("10.6.0.0/24", 11, 254, "zebra"),
    ("10.7.0.0/24", 99, 254, "99"),
    ("10.8.0.0/24", 42, 254, "babel"),
    ("10.9.0.0/24", 188, 1000, "ospf"),    # another table: shown too
]


def entries(d, source):
    """{prefix: entry} of one source."""
    return {p: e for p, es in d.show("routes").items() for e in es
            if e["source"] == source}


def by_protocol(d):
    """What show routes shows, counted per protocol of the selected entry
    (main table)."""
    c = collections.Counter()
    for es in d.show("routes").values():
        sel = [e for e in es if e.get("selected")]
        if sel:
            c[sel[0]["protocol"]] += 1
    return dict(c)


def summary_counts(d):
    return d.show("summary")["routesByProtocol"]


def state_counts(d):
    doc = json.loads(d.ctl("show", "state").stdout)
    return {x["name"]: x["count"]
            for x in doc["fpmd:fpmd"]["state"]["routes"]["protocol"]}


def kernel_local(lab):
    """r1's own addresses as the kernel has them: its local table's
    local, broadcast and anycast prefixes (fpmd's "local" routes)."""
    out = set()
    for fam, full in (("-4", "/32"), ("-6", "/128")):
        for r in json.loads(lab.r1.run(f"ip {fam} -j route show table "
                                       "local").stdout):
            if r.get("type") in ("local", "broadcast", "anycast"):
                out.add(r["dst"] if "/" in r["dst"] else r["dst"] + full)
    return out


def counts_agree(d, want):
    """Per-protocol counts of show routes, show summary and show state,
    once they agree with each other and with want(), the test's own count
    (the router's own IPv6 addresses may still arrive while they are
    read)."""
    last = {}

    def same():
        a, b, c, w = by_protocol(d), summary_counts(d), state_counts(d), \
            want()
        last.update(routes=a, summary=b, state=c, want=w)
        return a if a == b == c == w else None
    try:
        return wait_for(same, timeout=10, what="per-protocol counts agree")
    except AssertionError:
        raise AssertionError(f"per-protocol counts: {last}") from None


def test_raw_fpm_protocols_named_as_frr_does(lab, request):
    d = lab.fpmd(extra=("--fpm-settle", "300"))
    oif = lab.r1.ifindex("r1-eth1")
    # The main-table routes are in the kernel too, as zebra's would be:
    # the client hangs up before the checks below, and a second later
    # fpmd drops held main-table routes the kernel does not have.
    lab.r1.run(" && ".join(f"ip route add blackhole {pfx}"
                           for pfx, _, table, _ in RAW if table == 254))
    msgs = []
    for pfx, proto, table, _ in RAW:
        v6 = ":" in pfx
        msgs.append(route(pfx, gw=lab.H2_V6 if v6 else lab.H2_V4, oif=oif,
                          proto=proto, table=table))
    msgs.append(route("172.16.101.0/24", oif=lab.r1.ifindex("r1-eth0"),
                      proto=2, scope=RT_SCOPE_LINK))
    # A client that stays connected: once it has gone, fpmd would drop
    # its routes a second later (the kernel has none of them).
    keeper = fpm_keeper(lab, b"".join(frame(m) for m in msgs))
    request.addfinalizer(lambda: (keeper.kill(), keeper.wait()))
    assert keeper.stdout.readline().strip() == b"sent"
    d.ctl("route", "add", "10.50.0.0/24", "dev", "r1-eth1")

    fpm = wait_for(lambda: (lambda e: e if len(e) == len(RAW) + 1 else None)
                   (entries(d, "fpm")), timeout=5, what="the raw routes")
    for pfx, proto, table, name in RAW:
        e = fpm[pfx]
        assert e["protocol"] == name and e["table"] == table, \
            f"rtm_protocol {proto}: {e}"
    assert fpm["172.16.101.0/24"]["protocol"] == "kernel"
    assert entries(d, "static")["10.50.0.0/24"]["protocol"] == "fpmctl"
    own = entries(d, "kernel")
    assert own and all(e["protocol"] == "local" for e in own.values()), own

    # The text table shows the same names in its Protocol column.
    text = d.ctl("show", "routes").stdout.splitlines()
    assert text[0].split()[:3] == ["Prefix", "Source", "Protocol"], text[0]
    rows = {ln.split()[0]: ln.split() for ln in text[1:] if ln.strip()}
    for pfx, _, table, name in RAW:
        if table == 254:
            assert rows[pfx][1:3] == ["fpm", name], rows[pfx]
    assert rows["10.50.0.0/24"][1:3] == ["static", "fpmctl"]

    # Counted per protocol, the same in show summary, show state, and what
    # show routes lists: the main-table routes sent, the one by fpmctl, and
    # the kernel's own (local) prefixes.
    sent = collections.Counter(name for _, _, table, name in RAW
                               if table == 254)
    sent["kernel"] += 1                         # 172.16.101.0/24
    counts_agree(d, lambda: {**sent, "fpmctl": 1,
                             "local": len(kernel_local(lab))})
    text = d.ctl("show", "summary").stdout
    assert "routes by protocol bgp" in text, text

    # lookup names it too.
    lk = json.loads(d.ctl("--json", "lookup", "10.1.0.9").stdout)
    assert lk["protocol"] == "bgp" and lk["source"] == "fpm", lk


STATIC_NET, STATIC6_NET = "10.99.0.0/24", "2001:db8:99::/64"
CONNECTED = "172.16.101.0/24"


def check_zebra_protocols(lab, d, f, source, connected):
    f.configure(f"ip route {STATIC_NET} {lab.H2_V4}",
                f"ipv6 route {STATIC6_NET} {lab.H2_V6}")

    def ready():
        e = entries(d, source)
        return e if {STATIC_NET, STATIC6_NET, CONNECTED} <= set(e) else None
    e = wait_for(ready, timeout=15, what=f"zebra's routes over {source}")
    assert e[STATIC_NET]["protocol"] == "static", e[STATIC_NET]
    assert e[STATIC6_NET]["protocol"] == "static", e[STATIC6_NET]
    assert e[CONNECTED]["protocol"] == connected, e[CONNECTED]
    # As zebra counts its selected routes (FPM gives connected routes as
    # kernel, the plugin leaves fe80::/64 out), and the kernel's own.
    counts = counts_agree(d, lambda: {
        **zebra_counts(f, connected, linklocal=source == "fpm"),
        "local": len(kernel_local(lab))})
    # Two static routes; the connected ones: both families, both links.
    assert counts["static"] == 2 and counts[connected] >= 4, counts


def zebra_counts(f, connected, linklocal):
    """zebra's selected, installed routes per protocol (show ip route
    json), its connected ones named as the feed names them."""
    c = collections.Counter()
    for v6 in (False, True):
        for p, es in f.routes(v6).items():
            if p.startswith("fe80:") and not linklocal:
                continue
            sel = [e for e in es if e.get("selected") and e.get("installed")]
            if sel:
                proto = sel[0]["protocol"]
                c[connected if proto == "connected" else proto] += 1
    return dict(c)


def test_zebra_over_fpm(frrlab):
    lab = frrlab
    d = lab.fpmd(extra=("--fpm-settle", "300"))
    f = lab.frr()
    # FPM sends connected routes as RTPROT_KERNEL: "kernel".
    check_zebra_protocols(lab, d, f, "fpm", "kernel")


def test_zebra_over_plugin(needs_plugin, frrlab):
    lab = frrlab
    d = lab.fpmd(extra=("--no-fpm",))
    f = lab.frr(start=False, fpm=False)
    f.start_zebra(extra=["-M", f"{f.rel.plugin()}:{d.plugin_sock}"])
    f.start("staticd")
    # The plugin has zebra's own route type: "connected".
    check_zebra_protocols(lab, d, f, "plugin", "connected")
