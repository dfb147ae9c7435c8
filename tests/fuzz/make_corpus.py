#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes the fuzzers' seed corpora (tests/fuzz/corpus/TARGET/): valid
inputs that reach every kind of operation, so the fuzzer starts from
messages fpmd accepts rather than from noise. The FPM seeds are frames as
zebra 8.4.4's dplane_fpm_nl writes them (framing and attribute set as in
DESIGN.md; tests/fuzz/corpus/fpm/zebra-* are captured from a real zebra),
the protobuf seeds are messages of proto/fpmd.proto, built with the
tests' generated encoder (tests/lib/proto.py: run make first).

    tests/fuzz/make_corpus.py [OUTDIR]   (default: tests/fuzz/corpus)
"""
import os
import socket
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from lib.fpmwire import (NHA_GATEWAY, NHA_GROUP, NHA_ID,  # noqa: E402
                         NHA_OIF, RTA_DST, RTA_ENCAP, RTA_GATEWAY,
                         RTA_MULTIPATH, RTA_NH_ID, RTA_OIF, RTA_TABLE,
                         RTM_DELROUTE, RTM_NEWNEXTHOP, RTM_NEWROUTE,
                         RTN_BLACKHOLE, RTN_UNICAST, RTN_UNREACHABLE, nla,
                         nlmsg)
from lib.proto import (frame, hello, nexthop, pb, prefix,  # noqa: E402
                       replay_begin, replay_end, route)

# ---- FPM (netlink in FPM frames) ---------------------------------------------

RTM_DELNEXTHOP, NHA_BLACKHOLE, RTN_LOCAL, RTN_PROHIBIT = 105, 4, 2, 8
PROTO_STATIC, PROTO_BGP = 196, 186


def u32(v):
    return struct.pack("=I", v)


def addr(a):
    return socket.inet_pton(socket.AF_INET6 if ":" in a else socket.AF_INET,
                            a)


def rt(t, prefix, rtype=RTN_UNICAST, table=254, attrs=b"",
       proto=PROTO_STATIC):
    net, plen = prefix.split("/")
    fam = socket.AF_INET6 if ":" in net else socket.AF_INET
    body = struct.pack("=BBBBBBBBI", fam, int(plen), 0, 0,
                       table if table < 256 else 252, proto, 0, rtype, 0)
    body += nla(RTA_DST, addr(net)) + nla(RTA_TABLE, u32(table)) + attrs
    return nlmsg(t, body)


def nh(nhid, oif=0, gw=None, group=(), blackhole=False, fam=socket.AF_INET,
       t=RTM_NEWNEXTHOP):
    body = struct.pack("=BBBBI", fam, 0, PROTO_STATIC, 0, 0)
    body += nla(NHA_ID, u32(nhid))
    if group:
        body += nla(NHA_GROUP, b"".join(struct.pack("=IBBH", i, w - 1, 0, 0)
                                        for i, w in group))
    elif blackhole:
        body += nla(NHA_BLACKHOLE, b"")
    elif t == RTM_NEWNEXTHOP:
        body += nla(NHA_OIF, u32(oif))
        if gw:
            body += nla(NHA_GATEWAY, addr(gw))
    return nlmsg(t, body)


def rtnh(oif, gw=None, hops=0):
    a = nla(RTA_GATEWAY, addr(gw)) if gw else b""
    return struct.pack("=HBBi", 8 + len(a), 0, hops, oif) + a


def fpm(*msgs):
    payload = b"".join(msgs)
    return struct.pack(">BBH", 1, 1, 4 + len(payload)) + payload


def fpm_seeds():
    gw_oif = nla(RTA_GATEWAY, addr("10.0.1.2")) + nla(RTA_OIF, u32(2))
    return {
        # zebra with nexthop groups (the default): nexthops first
        "nhg-single-then-routes": fpm(nh(11, 2, "10.0.1.2")) + fpm(
            rt(RTM_NEWROUTE, "198.51.100.0/24", attrs=nla(RTA_NH_ID, u32(11))),
            rt(RTM_NEWROUTE, "203.0.113.7/32", attrs=nla(RTA_NH_ID, u32(11)))),
        "nhg-group-ecmp": fpm(nh(11, 2, "10.0.1.2"), nh(12, 3, "10.0.2.2"),
                              nh(13, group=((11, 1), (12, 3)))) + fpm(
            rt(RTM_NEWROUTE, "192.0.2.0/24", attrs=nla(RTA_NH_ID, u32(13)))),
        "nhg-v6": fpm(nh(21, 2, "fe80::2", fam=socket.AF_INET6),
                      nh(22, 3, "2001:db8:1::2", fam=socket.AF_INET6)) + fpm(
            rt(RTM_NEWROUTE, "2001:db8:100::/48",
               attrs=nla(RTA_NH_ID, u32(21))),
            rt(RTM_NEWROUTE, "2001:db8:200::/64",
               attrs=nla(RTA_NH_ID, u32(22)))),
        "nhg-onlink-and-blackhole": fpm(nh(31, 2), nh(32, blackhole=True)) +
        fpm(rt(RTM_NEWROUTE, "10.0.1.0/24", attrs=nla(RTA_NH_ID, u32(31))),
            rt(RTM_NEWROUTE, "10.9.0.0/16", rtype=RTN_BLACKHOLE,
               attrs=nla(RTA_NH_ID, u32(32)))),
        "nhg-unknown-id-then-sent": fpm(
            rt(RTM_NEWROUTE, "198.51.100.0/24", attrs=nla(RTA_NH_ID, u32(77)))
        ) + fpm(nh(77, 3, "10.0.2.2")),
        "nhg-delete-in-use-and-free": fpm(nh(11, 2, "10.0.1.2")) + fpm(
            rt(RTM_NEWROUTE, "198.51.100.0/24", attrs=nla(RTA_NH_ID, u32(11))),
            nh(11, t=RTM_DELNEXTHOP),
            rt(RTM_DELROUTE, "198.51.100.0/24"),
            nh(11, t=RTM_DELNEXTHOP)),
        # zebra without nexthop groups
        "gateway-oif": fpm(rt(RTM_NEWROUTE, "198.51.100.0/24", attrs=gw_oif)),
        "multipath": fpm(rt(RTM_NEWROUTE, "192.0.2.0/24", attrs=nla(
            RTA_MULTIPATH, rtnh(2, "10.0.1.2") + rtnh(3, "10.0.2.2", 2)))),
        "multipath-v6": fpm(rt(RTM_NEWROUTE, "2001:db8::/32", attrs=nla(
            RTA_MULTIPATH, rtnh(2, "fe80::1") + rtnh(3, "fe80::2")))),
        # a change is DELROUTE + NEWROUTE in one frame
        "replace-pair": fpm(rt(RTM_NEWROUTE, "198.51.100.0/24",
                               attrs=gw_oif)) + fpm(
            rt(RTM_DELROUTE, "198.51.100.0/24"),
            rt(RTM_NEWROUTE, "198.51.100.0/24", attrs=nla(
                RTA_GATEWAY, addr("10.0.2.2")) + nla(RTA_OIF, u32(3)))),
        "types": fpm(*(rt(RTM_NEWROUTE, f"10.{t}.0.0/16", rtype=t)
                       for t in (RTN_LOCAL, RTN_BLACKHOLE, RTN_UNREACHABLE,
                                 RTN_PROHIBIT, 5))),
        "encap-unsupported": fpm(rt(RTM_NEWROUTE, "10.5.0.0/16", attrs=gw_oif +
                                    nla(RTA_ENCAP, b"\0" * 8))),
        "other-table": fpm(rt(RTM_NEWROUTE, "10.7.0.0/16", table=1000,
                              attrs=gw_oif),
                           rt(RTM_DELROUTE, "10.7.0.0/16", table=1000)),
        "delete": fpm(rt(RTM_NEWROUTE, "198.51.100.0/24", attrs=gw_oif)) +
        fpm(rt(RTM_DELROUTE, "198.51.100.0/24")),
        "default-routes": fpm(rt(RTM_NEWROUTE, "0.0.0.0/0", attrs=gw_oif),
                              rt(RTM_NEWROUTE, "::/0", attrs=nla(
                                  RTA_GATEWAY, addr("fe80::1")) +
                                  nla(RTA_OIF, u32(2)))),
        "split-across-reads": fpm(rt(RTM_NEWROUTE, "10.8.0.0/16",
                                     attrs=gw_oif))[:30],
    }

# ---- plugin (PluginMsg) ------------------------------------------------------


def typed_delete(m):
    """A RouteOp delete that names the route type too."""
    m.route.type = pb.RT_UNICAST
    return m


def stream(*msgs):
    return b"".join(frame(m) for m in msgs)


def plugin_seeds():
    return {
        "replay": stream(
            hello(), replay_begin(1),
            nexthop(1, 11, "10.0.1.2", 2), nexthop(2, 12, "10.0.2.2", 3),
            nexthop(3, 13, group=((11, 1), (12, 2))),
            nexthop(4, 14, blackhole=True),
            route(5, "198.51.100.0", 24, "10.0.1.2", 2, nhg=11),
            route(6, "192.0.2.0", 24, "10.0.2.2", 3, nhg=13),
            route(7, "203.0.113.0", 24, "10.0.1.2", 2),
            route(8, "10.9.0.0", 16, rtype=2),
            route(9, "2001:db8::", 32, "fe80::1", 2),
            replay_end(1, 5)),
        "changes": stream(
            hello(), route(1, "198.51.100.0", 24, "10.0.1.2", 2),
            route(2, "198.51.100.0", 24, "10.0.2.2", 3),
            route(3, "198.51.100.0", 24, dele=True),
            nexthop(4, 11, "10.0.1.2", 2),
            route(5, "192.0.2.0", 24, "10.0.1.2", 2, nhg=11),
            nexthop(6, 11, dele=True),
            route(7, "192.0.2.0", 24, dele=True),
            nexthop(8, 11, dele=True)),
        "other-table": stream(hello(), route(1, "10.7.0.0", 16, table=1000),
                              typed_delete(route(2, "10.7.0.0", 16,
                                                 table=1000, dele=True))),
        "replay-mismatch": stream(hello(), replay_begin(3),
                                  route(1, "10.1.0.0", 16, "10.0.1.2", 2),
                                  replay_end(4, 1), replay_begin(4),
                                  replay_end(4, 0)),
        "hello-only": stream(hello()),
        "wrong-version": stream(hello(2)),
    }

# ---- control (Request) -------------------------------------------------------


def ctl_route(a, plen, gw=None, ifname="", nhid=0, rtype=0):
    return pb.Route(prefix=prefix(a, plen), type=rtype, nhid=nhid,
                    gateway=addr(gw) if gw else b"", ifname=ifname)


def ctl_nexthop(nhid, gw=None, ifname="", members=()):
    return pb.Nexthop(id=nhid, gateway=addr(gw) if gw else b"",
                      ifname=ifname,
                      members=[pb.GroupMember(nhid=m, weight=w)
                               for m, w in members])


def ctl_neigh(a, ifname, mac=b""):
    return pb.Neighbor(addr=addr(a), ifname=ifname, mac=mac)


def req(**kw):
    """A Request: one of its fields, e.g. req(route_add=ctl_route(...))."""
    return pb.Request(**kw)


def show(what, pfx=None):
    return req(show=pb.ShowRequest(what=what,
                                   prefix=prefix(*pfx) if pfx else None))


def lookup(a):
    return req(lookup=pb.LookupRequest(addr=addr(a)))


def ctl_seeds():
    # "lo" is the one interface name every fuzzing host has.
    hi = req(hello=pb.Hello(version=1, peer="test plugin"))
    return {
        "routes-and-show": stream(
            hi, req(route_add=ctl_route("198.51.100.0", 24, "10.0.1.2",
                                        "lo")),
            req(route_add=ctl_route("10.9.0.0", 16, rtype=2)),
            req(route_add=ctl_route("2001:db8::", 32, "fe80::1", "lo")),
            show(1), show(1, ("198.51.100.0", 24)), show(8),
            req(route_del=ctl_route("198.51.100.0", 24))),
        "nexthops-and-groups": stream(
            hi, req(nexthop_add=ctl_nexthop(1, "10.0.1.2", "lo")),
            req(nexthop_add=ctl_nexthop(2, "10.0.1.3", "lo")),
            req(nexthop_add=ctl_nexthop(3, members=((1, 1), (2, 2)))),
            req(route_add=ctl_route("192.0.2.0", 24, nhid=3)), show(2),
            req(nexthop_del=ctl_nexthop(3)),
            req(route_del=ctl_route("192.0.2.0", 24)),
            req(nexthop_del=ctl_nexthop(3)),
            req(nexthop_del=ctl_nexthop(1))),
        "neighbors": stream(
            hi, req(neigh_add=ctl_neigh("10.0.1.2", "lo",
                                        b"\x02\0\0\0\0\x09")),
            req(route_add=ctl_route("198.51.100.0", 24, "10.0.1.2", "lo")),
            show(3), req(neigh_del=ctl_neigh("10.0.1.2", "lo"))),
        "lookups": stream(
            hi, req(route_add=ctl_route("198.51.100.0", 24, "10.0.1.2",
                                        "lo")),
            lookup("198.51.100.9"), lookup("2001:db8::1"),
            lookup("127.0.0.1")),
        "shows": stream(hi, *(show(w) for w in range(0, 13))),
        "clear-reload": stream(hi, req(clear_counters=True),
                               req(reload=True)),
        "no-hello": stream(show(1)),
    }

# ---- configuration files -----------------------------------------------------


CONF_JSON = {
    "empty": "{}\n",
    "interfaces": '{"fpmd:fpmd": {"xdp-mode": "generic", "interfaces": '
    '{"interface": [{"name": "eth0"}, {"name": "eth1", "enabled": false, '
    '"xdp-mode": "native"}]}}}\n',
    "fpm": '{"fpmd:fpmd": {"fpm": {"enabled": true, "address": '
    '["127.0.0.1", "::1"], "port": 2620, "settle-time": 3000, '
    '"hold-time": 300}}}\n',
    "sockets": '{"fpmd:fpmd": {"plugin": {"enabled": true, "socket": '
    '{"path": "/run/fpmd/plugin.sock", "owner": "root", "group": "frr", '
    '"mode": "0660"}}, "control": {"socket": {"path": "/run/fpmd/fpmd.sock"'
    '}}}}\n',
    "tables": '{"fpmd:fpmd": {"tables": {"max-routes-v4": 1000, '
    '"max-routes-v6": 1000, "max-nexthops": 1024, "max-groups": 64, '
    '"ipv4-lookup": "lpm-trie", "ipv6-lookup": "lpm-trie", '
    '"max-neighbors": 1024}}}\n',
    "behaviour-logging": '{"fpmd:fpmd": {"behaviour": {"keep-forwarding": '
    'true, "allow-netfilter-bypass": true, "guard-interval": 1000}, '
    '"logging": {"target": "file", "file": "/var/log/fpmd.log", '
    '"level": "debug"}}}\n',
}

CONF_XML = {
    "xml-fpm": '<fpmd xmlns="urn:fpmd:yang:fpmd">\n  <fpm>\n'
    '    <port>2620</port>\n  </fpm>\n  <interfaces>\n    <interface>\n'
    '      <name>eth0</name>\n    </interface>\n  </interfaces>\n</fpmd>\n',
}


def conf_seeds(builddir):
    seeds = {k: v.encode() for k, v in {**CONF_JSON, **CONF_XML}.items()}
    fpmd = os.path.join(builddir, "fpmd", "fpmd")
    if os.access(fpmd, os.X_OK):
        seeds["default"] = subprocess.run(
            [fpmd, "--show-default-config"], capture_output=True,
            check=True, timeout=10).stdout
    return seeds


# ---- RIB operation sequences (fuzz_rib.c) -------------------------------------

# op bytes: 0/1 route add, 2 route del, 3 nexthop add, 4 group add,
# 5 nexthop del, 6 neighbor, 7 interface change, 8 sweep
def rib_seeds():
    return {
        # nexthops 1, 2 (gateways 10.0.0.1/2 on ifindex 1/2), group 3,
        # routes by id, a neighbor, the link down and up, deletes
        "ids-group-neigh": bytes([
            3, 0, 0x05, 1, 0,  3, 0, 0x16, 2, 0,
            4, 0, 2, 2, 0x11, 0x22, 0,
            0, 0x08, 0, 0x10, 0, 1,  0, 0x08, 0, 0x91, 2, 1,
            6, 0x05, 9,  7, 0,  7, 0,  7, 0x0c,
            2, 0, 0x10,  5, 0, 3,  8, 0x00]),
        # the same prefix from three sources, implicit paths (ECMP)
        "sources-meet": bytes([
            0, 0x20, 0, 0x03, 0, 0x05, 1, 0x06, 2,
            0, 0x00, 1, 0x03, 1, 0x15, 0,
            0, 0x00, 2, 0x03, 0, 0x39, 0,
            6, 0x15, 7,  2, 1, 0x03,  8, 0x04,  2, 0, 0x03,  2, 2, 0x03]),
        "types-and-v6": bytes([
            0, 0x03, 0, 0x82, 0,  0, 0x04, 1, 0x84, 0,  0, 0x06, 2, 0x07, 0,
            0, 0x00, 1, 0x83, 0, 0x0d, 0,  6, 0x1d, 5,  7, 0x01, 8, 0x01]),
    }


def main():
    top = os.path.dirname(os.path.dirname(HERE))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
    builddir = os.environ.get("FPMD_BUILDDIR", os.path.join(top, "build"))
    for target, seeds in (("fpm", fpm_seeds()), ("plugin", plugin_seeds()),
                          ("ctl", ctl_seeds()),
                          ("conf", conf_seeds(builddir)),
                          ("rib", rib_seeds())):
        d = os.path.join(out, target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print(f"{d}: {len(seeds)} seeds")


if __name__ == "__main__":
    main()
