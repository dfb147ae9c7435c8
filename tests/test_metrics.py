# SPDX-License-Identifier: GPL-2.0-or-later
"""The Prometheus endpoint (fpmd(8) METRICS, yang container metrics).

- off by default: nothing listens; a reload turns it on, moves it to
  another port and turns it off again;
- HTTP: GET /metrics answers the text format 0.0.4 with its content type,
  other paths 404, other methods 405;
- a port in use is logged and fpmd keeps running; a bad address or port
  in the configuration is refused with the leaf named;
- after a known number of packets through XDP, the forwarded counter has
  grown by exactly that number, `promtool check metrics` (with its lint)
  passes, and every value equals `fpmctl --json show counters / summary /
  state / guards` taken at the same moment;
- a real Prometheus server scrapes fpmd: `up` is 1 and a counter has the
  value fpmctl shows.
"""
import json
import os
import signal
import subprocess
import time

import pytest

from lib.lab import FPMD, ping, shquote, wait_for
from lib.traffic import fwd4
from lib.metrics import (PORT, http, listening, parse, promtool, scrape, val,
                         vsum)


# ---- on, off, moved: by reload --------------------------------------------


def test_off_by_default_and_reload(lab):
    base = {}
    path = lab.write_config(lab.config_doc(**base))
    d = lab.fpmd(config=path)
    # Off by default: nothing listens, on the default port or any other.
    assert not listening(lab.r1, PORT)
    assert http(lab.r1)[0] == 0
    assert "metrics:" not in d.logtext()

    # On by reload: default address and port.
    lab.write_config(lab.config_doc(metrics={"enabled": True}))
    d.ctl("reload")
    wait_for(lambda: listening(lab.r1, PORT), what="metrics listening")
    assert "metrics: serving http://127.0.0.1:9343/metrics" in d.logtext()
    text = scrape(lab.r1)
    assert "fpmd_info{" in text
    # Loopback only: the router's own addresses do not answer.
    assert http(lab.r1, addr=lab.R1_V4_0)[0] == 0

    # Moved to another address and port: the old one closes.
    lab.write_config(lab.config_doc(metrics={
        "enabled": True, "address": "::1", "port": 9400}))
    d.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: listening(lab.r1, 9400), what="metrics moved")
    assert not listening(lab.r1, PORT)
    assert "fpmd_info{" in scrape_at(lab.r1, "::1", 9400)

    # Off again.
    lab.write_config(lab.config_doc())
    d.ctl("reload")
    wait_for(lambda: not listening(lab.r1, 9400), what="metrics closed")
    assert "config: metrics off" in d.logtext()
    assert d.proc.poll() is None


def scrape_at(ns, addr, port):
    status, _, body = http(ns, port=port, addr=addr)
    assert status == 200, status
    return body


# ---- HTTP -------------------------------------------------------------------


def test_http_answers(lab):
    d = lab.fpmd(extra=["--metrics"])
    status, headers, body = http(lab.r1)
    assert status == 200
    assert headers["content-type"] == \
        "text/plain; version=0.0.4; charset=utf-8"
    assert body.startswith("# HELP fpmd_info ")
    # A scraper may keep its connection for the next scrape.
    assert headers.get("connection") != "close", headers
    # Only GET /metrics.
    for path in ("/", "/metric", "/metrics/", "/metrics/x", "/api"):
        status, _, body = http(lab.r1, path)
        assert status == 404, (path, status)
        assert "fpmd serves GET /metrics" in body
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        status, headers, _ = http(lab.r1, method=method)
        assert status == 405, (method, status)
        assert headers.get("allow") == "GET", headers
    # Clients that connect and say nothing are closed after the
    # connection timeout (MHD's timer runs in fpmd's loop), and a scrape
    # works again.
    idle = lab.r1.popen(
        "exec /usr/bin/python3 -c 'import socket, time\n"
        f"ss = [socket.create_connection((\"127.0.0.1\", {PORT}))\n"
        "      for _ in range(16)]\n"
        "print(\"ready\", flush=True)\n"
        "deadline = time.time() + 40\n"
        "for s in ss:\n"
        "    s.settimeout(max(0.1, deadline - time.time()))\n"
        "    try:\n"
        "        print(\"closed\" if s.recv(1) == b\"\" else \"data\")\n"
        "    except ConnectionResetError:\n"
        "        print(\"closed\")\n"
        "    except socket.timeout:\n"
        "        print(\"open\")\n"
        "'", stdout=subprocess.PIPE, text=True)
    try:
        assert idle.stdout.readline().strip() == "ready"
        out, _ = idle.communicate(timeout=90)
    finally:
        if idle.poll() is None:
            idle.kill()
            idle.wait()
    assert out.split() == ["closed"] * 16, out
    assert d.proc.poll() is None
    assert http(lab.r1)[0] == 200


# ---- bad input ---------------------------------------------------------------


def test_port_in_use_is_logged_and_fpmd_runs(lab):
    holder = lab.r1.popen(
        "exec /usr/bin/python3 -c 'import socket, time\n"
        "s = socket.socket()\n"
        f"s.bind((\"127.0.0.1\", {PORT}))\n"
        "s.listen()\n"
        "print(\"ready\", flush=True)\n"
        "time.sleep(60)'", stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        d = lab.fpmd(extra=["--metrics"])
        wait_for(lambda: "metrics: cannot listen" in d.logtext(),
                 what="the bind failure logged")
        assert ("metrics: cannot listen on 127.0.0.1 port 9343: Address "
                "already in use; fpmd runs without its metrics endpoint"
                ) in d.logtext()
        # fpmd runs on: the control socket answers, interfaces attached.
        assert d.proc.poll() is None
        assert d.show("summary")["routesV4"] >= 0
        st = d.show("state")["fpmd:fpmd"]["state"]
        assert all(i["attached"] for i in st["interface"])
    finally:
        holder.kill()
        holder.wait()
    # The port is free now: a reload tries again.
    d.ctl("reload")
    wait_for(lambda: listening(lab.r1, PORT), what="metrics after reload")
    assert "fpmd_info{" in scrape(lab.r1)


# (option or file leaf, value, what the error names)
BAD = [
    (["--metrics-address", "localhost"], "/fpmd:fpmd/metrics/address",
     "localhost"),
    (["--metrics-address", "10.0.0.300"], "/fpmd:fpmd/metrics/address",
     "10.0.0.300"),
    (["--metrics-port", "0"], "/fpmd:fpmd/metrics/port", "0"),
    (["--metrics-port", "65536"], "/fpmd:fpmd/metrics/port", "65536"),
]


@pytest.mark.parametrize("args,leaf,value", BAD,
                         ids=[" ".join(b[0]) for b in BAD])
def test_bad_metrics_config_refused(args, leaf, value):
    r = subprocess.run([FPMD, "-C"] + args, capture_output=True, text=True,
                       timeout=10)
    assert r.returncode == 2, r.stderr
    assert leaf in r.stderr and value in r.stderr, r.stderr


def test_metrics_options_set_the_leaves():
    r = subprocess.run([FPMD, "-C", "--metrics-port", "9500"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)["fpmd:fpmd"]
    assert doc["metrics"] == {"enabled": True, "port": 9500}
    r = subprocess.run([FPMD, "-C", "--metrics"], capture_output=True,
                       text=True, timeout=10)
    assert json.loads(r.stdout)["fpmd:fpmd"]["metrics"] == {"enabled": True}


# ---- values: promtool, and fpmctl at the same moment -------------------------


# An echo request of ping's default size on the wire: Ethernet 14, IPv4
# 20, ICMP 8, data 56.
ECHO_FRAME = 98


def sink(lab):
    """The oracle outside fpmd: echo requests h2 received, and datagrams
    r1's kernel forwarded."""
    return lab.h2.snmp("Icmp", "InEchos"), fwd4(lab.r1)


def assert_sink(lab, s0, n):
    echos, kfwd = sink(lab)
    assert echos - s0[0] == n, f"h2 received {echos - s0[0]} of {n} echoes"
    assert kfwd == s0[1], f"r1's kernel forwarded {kfwd - s0[1]}"


def fast_path(lab, d):
    lab.routes_and_neighbors(d)
    lab.warm_kernel_neighbors()
    assert ping(lab.h1, lab.H2_V4, 2, 0.05) == 2


def steady(summary):
    """The summary less the event loop's numbers (every request is an
    iteration: they always move) and fpmd's memory (each answer is
    built in memory)."""
    return {k: v for k, v in summary.items()
            if not k.startswith("loop") and k not in ("heapInUse",
                                                       "resident")}


def quiet_snapshot(lab, d, tries=20):
    """A scrape with fpmctl's counters, summary, state and guards that
    did not move around it (IPv6 router solicitations and the like may
    arrive at any time)."""
    for _ in range(tries):
        before = (d.show("counters"), d.show("summary"), d.show("guards"))
        text = scrape(lab.r1)
        state = d.show("state")["fpmd:fpmd"]["state"]
        after = (d.show("counters"), d.show("summary"), d.show("guards"))
        if (before[0], steady(before[1]), before[2]) == \
                (after[0], steady(after[1]), after[2]):
            return text, before[0], before[1], state, before[2]
        time.sleep(0.2)
    raise AssertionError("counters never stood still")


def test_values_equal_fpmctl(lab):
    d = lab.fpmd(extra=["--metrics"])
    fast_path(lab, d)
    s0, _ = parse(scrape(lab.r1))
    k0 = sink(lab)
    n = 25
    assert ping(lab.h1, lab.H2_V4, n, 0.02) == n
    assert_sink(lab, k0, n)
    text, counters, summary, state, guards = quiet_snapshot(lab, d)
    s = check_against_fpmctl(text, counters, summary, state, guards)
    check_routes_tally(d, s)

    # The n echo requests h1 sent and h2 received went through XDP, each
    # once, ECHO_FRAME bytes each.
    fwd = dict(interface="r1-eth0", reason="forwarded")
    for fam, lbl, size in (
            ("fpmd_packets_total", fwd, 1),
            ("fpmd_bytes_total", fwd, ECHO_FRAME),
            ("fpmd_tx_packets_total", dict(interface="r1-eth1"), 1),
            ("fpmd_tx_bytes_total", dict(interface="r1-eth1"), ECHO_FRAME)):
        assert val(s, fam, **lbl) - val(s0, fam, **lbl) == n * size, \
            (fam, lbl, val(s, fam, **lbl) - val(s0, fam, **lbl), n * size)
    # Routes and neighbors by hand: the static source.
    for fam in ("ipv4", "ipv6"):
        assert val(s, "fpmd_routes", family=fam, source="static",
                   protocol="fpmctl", state="forwarding") == 2, fam
    assert val(s, "fpmd_neighbors", family="ipv4", source="static") == 2
    assert val(s, "fpmd_neighbors", family="ipv6", source="static") == 2


def test_values_equal_fpmctl_with_zebra(frrlab):
    """zebra feeding fpmd over FPM: the feed's and its routes' metrics."""
    lab = frrlab
    lab.h2.run("ip addr add 10.99.0.1/24 dev lo")
    d = lab.fpmd(extra=["--metrics", "--fpm-settle", "300"])
    f = lab.frr()
    f.configure(f"ip route 10.99.0.0/24 {lab.H2_V4}")
    lab.warm_kernel_neighbors()

    def routed():
        fpm = d.show("fpm")
        routes = d.show("routes").get("10.99.0.0/24", [])
        return fpm.get("connected") and \
            fpm.get("replayState") == "settled" and \
            any(e.get("source") == "fpm" and e.get("installed") and
                e.get("state") == "forwarding" for e in routes)
    wait_for(routed, timeout=30, interval=0.2,
             what="zebra's route forwarding in fpmd")
    c0, k0 = d.counter("r1-eth0", "forwarded"), sink(lab)
    assert ping(lab.h1, "10.99.0.1", 10, 0.02) == 10
    assert_sink(lab, k0, 10)
    text, counters, summary, state, guards = quiet_snapshot(lab, d)
    s = check_against_fpmctl(text, counters, summary, state, guards)
    check_routes_tally(d, s)
    assert val(s, "fpmd_feed_connected", feed="fpm") == 1
    assert val(s, "fpmd_feed_replay_state", feed="fpm", state="settled") == 1
    assert val(s, "fpmd_feed_frames_total", feed="fpm") > 0
    # zebra's selected routes, as zebra itself lists them.
    fib = zebra_fib(f)
    assert val(s, "fpmd_feed_routes", feed="fpm") == \
        summary["routesBySource"]["fpm"] == len(fib), fib
    assert 0 < time.time() - val(
        s, "fpmd_feed_last_replay_start_timestamp_seconds", feed="fpm") < 300
    assert vsum(s, "fpmd_routes", family="ipv4", source="fpm",
                state="forwarding") >= 3
    assert vsum(s, "fpmd_routes", source="fpm", protocol="static") == 1
    assert val(s, "fpmd_packets_total", interface="r1-eth0",
               reason="forwarded") - c0 == 10


def test_routes_tally_follows_state_changes(lab):
    """fpmd_routes follows changes that move many routes' state without
    touching them (a neighbor gone, an egress down): 50 routes via h2's
    address go unresolved when the neighbor goes, forwarding when it is
    back, egress-down with r1-eth1 down; at every step the tally equals
    the routes' own states."""
    d = lab.fpmd(extra=["--metrics"])
    lab.routes_and_neighbors(d, v6=False)
    nets = [f"10.77.{k}.0/24" for k in range(50)]
    for p in nets:
        d.ctl("route", "add", p, "via", lab.H2_V4, "dev", "r1-eth1")

    def count(state):
        s, _ = parse(scrape(lab.r1))
        check_routes_tally(d, s)
        return vsum(s, "fpmd_routes", source="static", protocol="fpmctl",
                    state=state)

    # with the two connected routes routes_and_neighbors adds
    for state, n, change in (
            ("forwarding", len(nets) + 2, None),
            ("unresolved", len(nets),
             ("neighbor", "del", lab.H2_V4, "dev", "r1-eth1")),
            ("forwarding", len(nets) + 2,
             ("neighbor", "add", lab.H2_V4, "lladdr", lab.h2.mac("h2-eth0"),
              "dev", "r1-eth1"))):
        if change:
            d.ctl(*change)
        # the tally follows within the deferred scan (milliseconds here)
        wait_for(lambda: count(state) == n, timeout=5, interval=0.1,
                 what=f"{n} routes {state} in fpmd_routes")
    lab.r1.run("ip link set r1-eth1 down")
    wait_for(lambda: count("egress-down") == len(nets) + 1, timeout=5,
             interval=0.1, what="the routes via r1-eth1 egress-down in "
             "fpmd_routes")


def check_routes_tally(d, s):
    """fpmd_routes is fpmd's running tally (no walk per scrape): the same
    counts as each route's state worked out now (`show routes`), by
    family, source, protocol and state."""
    live = {}
    for p, entries in d.show("routes").items():
        fam = "ipv6" if ":" in p else "ipv4"
        sel = [e for e in entries if e.get("selected")]
        key = (fam, sel[0]["source"], sel[0]["protocol"],
               sel[0]["state"]) if sel else \
            (fam, "none", "none", "not-selected")
        live[key] = live.get(key, 0) + 1
    tally = {(dict(ls)["family"], dict(ls)["source"], dict(ls)["protocol"],
              dict(ls)["state"]): n for ls, n in s["fpmd_routes"].items()}
    assert tally == live, f"tally {tally}\nper route {live}"


def zebra_fib(f):
    """zebra's selected, installed prefixes, both families."""
    return {p for v6 in (False, True) for p, es in f.routes(v6).items()
            if any(e.get("selected") and e.get("installed") for e in es)}


def check_against_fpmctl(text, counters, summary, state, guards):
    """promtool's check, then every family against fpmctl's view of the
    same moment; returns the parsed samples."""
    s, types = parse(text)
    rc, out = promtool(text)
    assert rc == 0 and not out.strip(), out

    # Every family has HELP and TYPE, counters end in _total.
    for name, typ in types.items():
        assert f"# HELP {name} " in text
        assert name.startswith("fpmd_")
        assert name.endswith("_total") == (typ == "counter"), name

    # Counters: one sample per interface and reason, as fpmctl.
    tx_reasons = {"tx": "fpmd_tx_packets_total",
                  "tx-redirect-error": "fpmd_tx_redirect_errors_total",
                  "tx-xmit-drop": "fpmd_tx_xmit_drops_total"}
    for ifname, reasons in counters.items():
        for reason, c in reasons.items():
            if reason in tx_reasons:
                assert val(s, tx_reasons[reason], interface=ifname) == \
                    c["packets"], (ifname, reason)
                if reason == "tx":
                    assert val(s, "fpmd_tx_bytes_total",
                               interface=ifname) == c["bytes"]
                continue
            lab_ = dict(interface=ifname, reason=reason)
            assert val(s, "fpmd_packets_total", **lab_) == c["packets"], \
                lab_
            assert val(s, "fpmd_bytes_total", **lab_) == c["bytes"], lab_
    assert len(s["fpmd_packets_total"]) == \
        sum(len(r) - len(tx_reasons) for r in counters.values())

    # Routes, nexthops, neighbors, maps: 'show summary' and 'show state'.
    routes = s["fpmd_routes"]
    by = lambda key: {  # noqa: E731
        v: sum(n for ls, n in routes.items() if dict(ls)[key] == v)
        for v in {dict(ls)[key] for ls in routes}}
    assert by("family").get("ipv4", 0) == summary["routesV4"] == \
        state["routes"]["ipv4"]
    assert by("family").get("ipv6", 0) == summary["routesV6"]
    assert {k: n for k, n in by("state").items()} == \
        {e["name"]: e["count"] for e in state["routes"]["route-state"]}
    assert sum(n for ls, n in routes.items()
               if dict(ls)["state"] not in ("map-full", "error")) == \
        summary["programmed"]
    assert by("state")["forwarding"] >= 4
    assert by("protocol") == summary["routesByProtocol"], \
        (by("protocol"), summary["routesByProtocol"])
    for src, count in summary["routesBySource"].items():
        assert val(s, "fpmd_route_entries", source=src) == count, src
    assert val(s, "fpmd_routes_other_table") == summary["otherTable"]
    assert sum(s["fpmd_nexthops"].values()) == summary["nexthops"]
    assert sum(s["fpmd_nexthop_groups"].values()) == summary["groups"]
    nh_states = {}
    for fam in ("fpmd_nexthops", "fpmd_nexthop_groups"):
        for ls, n in s[fam].items():
            st = dict(ls)["state"]
            nh_states[st] = nh_states.get(st, 0) + n
    assert nh_states == {e["name"]: e["count"]
                         for e in state["nexthops"]["nexthop-state"]}
    assert sum(s["fpmd_neighbors"].values()) == summary["neighbors"]
    for m, key in (("routes_v4", "maxRoutesV4"), ("routes_v6", "maxRoutesV6"),
                   ("nexthops", "maxNexthops"), ("nh_groups", "maxGroups")):
        assert val(s, "fpmd_map_capacity", map=m) == summary[key], m
    assert val(s, "fpmd_map_entries", map="routes_v4") + \
        val(s, "fpmd_map_entries", map="routes_v6") == summary["programmed"]
    for fam in ("4", "6"):
        assert val(s, "fpmd_map_entries", map="neigh_v" + fam) == sum(
            n for ls, n in s["fpmd_neighbors"].items()
            if dict(ls)["family"] == "ipv" + fam)
    for m, key in (("routes", "routeMapFull"), ("nexthops", "nexthopMapFull"),
                   ("nh_groups", "groupMapFull")):
        assert val(s, "fpmd_map_full_total", map=m) == summary[key], m
    assert val(s, "fpmd_map_write_errors_total") == summary["mapErrors"]
    for res, key in (("sent", "neighborUseSent"),
                     ("failed", "neighborUseFailed")):
        assert val(s, "fpmd_neighbor_use_total", result=res) == \
            summary[key], res
    # The chunked maps, as show summary counts them.
    assert val(s, "fpmd_map_chunks", state="live") == summary["mapChunks"]
    assert val(s, "fpmd_map_chunks", state="dropping") == \
        summary["mapChunksDropping"]
    assert val(s, "fpmd_map_chunks_dropped_total") == \
        summary["mapChunksDropped"]
    assert val(s, "fpmd_map_chunk_bytes") == summary["mapChunkBytes"]
    assert summary["mapChunks"] > 0 and summary["mapChunkBytes"] > 0

    # The event loop: summary was taken before the scrape, so the scrape
    # has seen at least its iterations, and a maximum at least as long.
    it = "fpmd_loop_iteration_seconds"
    assert s[it + "_count"][frozenset()] >= summary["loopIterations"] > 0
    buckets = sorted((float(dict(ls)["le"]), n)
                     for ls, n in s[it + "_bucket"].items())
    assert buckets[-1] == (float("inf"), s[it + "_count"][frozenset()])
    assert all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])), buckets
    slow = s[it + "_count"][frozenset()] - dict(buckets)[0.02]
    assert val(s, "fpmd_loop_iterations_slow_total") == slow
    assert val(s, "fpmd_loop_iterations_slow_total") >= \
        summary["loopIterationsSlow"]
    mx = {dict(ls)["window"]: (n, dict(ls)["step"])
          for ls, n in s["fpmd_loop_iteration_max_seconds"].items()}
    assert set(mx) == {"start", "60s"}, mx
    assert summary["loopIterationMaxUs"] > 0 and \
        summary["loopIterationMaxStep"], summary
    assert mx["start"][0] >= summary["loopIterationMaxUs"] / 1e6 > 0
    assert mx["start"][1] and mx["start"][0] >= mx["60s"][0] > 0, mx

    # Memory: the heap in use (0 under ASan, whose allocator does not
    # say) within the resident set; the summary and the state tree carry
    # the same two (taken a moment apart: their relation, and the RSS
    # against /proc within 10 %).
    rss = {}
    for name, src in (("metrics", (val(s, "fpmd_heap_in_use_bytes"),
                                   val(s, "fpmd_resident_bytes"))),
                      ("summary", (summary["heapInUse"],
                                   summary["resident"])),
                      ("state", (int(state["memory"]["heap-in-use"]),
                                 int(state["memory"]["resident"])))):
        heap, rss[name] = src
        assert rss[name] > heap >= 0, (name, src)
    assert max(rss.values()) <= 1.1 * min(rss.values()), rss

    # Interfaces, feeds, guards, version: 'show state' / 'show guards'.
    for i in state["interface"]:
        name = i["name"]
        mode = i.get("xdp-mode", "none") if i["attached"] else "none"
        assert val(s, "fpmd_interface_xdp_attached", interface=name,
                   mode=mode) == int(i["attached"])
        assert val(s, "fpmd_interface_xdp_state", interface=name,
                   state=i["xdp-state"]) == 1
        assert sum(n for ls, n in s["fpmd_interface_xdp_state"].items()
                   if dict(ls)["interface"] == name) == 1
        assert val(s, "fpmd_interface_up", interface=name) == \
            int(i["oper-status"] == "up")
        assert val(s, "fpmd_interface_tx_port", interface=name) == \
            int(i["tx-port"])
        assert val(s, "fpmd_interface_suspended", interface=name) == \
            int(i["suspended"])
        assert val(s, "fpmd_interface_xmit_sg", interface=name) == \
            int(i["xmit-sg"])
    for feed in ("fpm", "plugin"):
        f = state["feeds"][feed]
        assert val(s, "fpmd_feed_enabled", feed=feed) == int(f["enabled"])
        assert val(s, "fpmd_feed_connected", feed=feed) == int(f["connected"])
        for fam, key in (("connections", "connections"),
                         ("frames", "frames"), ("messages", "messages"),
                         ("errors", "errors"),
                         ("refused_connections", "refused"),
                         ("ignored_messages", "ignored")):
            assert val(s, f"fpmd_feed_{fam}_total", feed=feed) == \
                int(f[key]), (feed, fam)
        replay = f["last-replay"]
        assert val(s, "fpmd_feed_replay_state", feed=feed,
                   state=replay["state"]) == 1
        assert val(s, "fpmd_feed_last_replay_refreshed_routes",
                   feed=feed) == int(replay["refreshed"])
        assert val(s, "fpmd_feed_last_replay_swept_routes",
                   feed=feed) == int(replay["swept"])
    assert len(guards) >= 9
    for name, g in guards.items():
        assert val(s, "fpmd_guard_state", guard=name,
                   state=g["state"]) == 1, (name, g)
        assert sum(n for ls, n in s["fpmd_guard_state"].items()
                   if dict(ls)["guard"] == name) == 1
        assert val(s, "fpmd_guard_events_total", guard=name) == \
            g.get("events", 0), (name, g)
    assert val(s, "fpmd_info", version=state["version"],
               layout=str(state["map-layout"])) == 1
    assert val(s, "fpmd_maps_adopted") == int(state["maps-adopted"])
    assert abs(val(s, "fpmd_start_time_seconds") - time.time()) < 300
    return s


# ---- a real Prometheus -------------------------------------------------------


class Prometheus:
    """/usr/bin/prometheus inside ns, scraping fpmd every second."""

    def __init__(self, lab, ns, target, port=9090):
        self.ns, self.port = ns, port
        d = os.path.join(lab.tmp, "prometheus")
        os.makedirs(d)
        conf = os.path.join(d, "prometheus.yml")
        with open(conf, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: fpmd\n"
                    f"    static_configs:\n      - targets: ['{target}']\n")
        self.log = os.path.join(d, "prometheus.log")
        self.proc = ns.popen(
            f"exec /usr/bin/prometheus --config.file={shquote(conf)} "
            f"--storage.tsdb.path={shquote(os.path.join(d, 'data'))} "
            f"--web.listen-address=127.0.0.1:{port} "
            f">{shquote(self.log)} 2>&1")

    def query(self, q):
        """The value of an instant query; None until Prometheus is ready
        (it answers 503 while its storage starts)."""
        r = self.ns.run(
            f"curl -sf -m 5 http://127.0.0.1:{self.port}/api/v1/query "
            f"--data-urlencode {shquote('query=' + q)}", check=False)
        if r.returncode:
            return None
        doc = json.loads(r.stdout)
        assert doc["status"] == "success", doc
        res = doc["data"]["result"]
        return float(res[0]["value"][1]) if res else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def test_prometheus_scrapes_fpmd(lab):
    d = lab.fpmd(extra=["--metrics"])
    fast_path(lab, d)
    fwd, k0 = d.counter("r1-eth0", "forwarded"), sink(lab)
    assert ping(lab.h1, lab.H2_V4, 10, 0.02) == 10
    assert_sink(lab, k0, 10)
    fwd += 10       # the 10 echo requests h2 received, by XDP
    assert d.counter("r1-eth0", "forwarded") == fwd
    prom = Prometheus(lab, lab.r1, f"127.0.0.1:{PORT}")
    try:
        wait_for(lambda: prom.query('up{job="fpmd"}') == 1, timeout=90,
                 interval=0.5, what="Prometheus: up == 1")
        q = ('fpmd_packets_total{job="fpmd",interface="r1-eth0",'
             'reason="forwarded"}')
        wait_for(lambda: prom.query(q) == fwd, timeout=30, interval=0.5,
                 what=f"Prometheus: {q} == {fwd}")
        assert prom.query('fpmd_interface_xdp_state{interface="r1-eth1",'
                          'state="attached"}') == 1
    except AssertionError:
        with open(prom.log) as f:
            print(f.read()[-3000:])
        raise
    finally:
        prom.stop()
