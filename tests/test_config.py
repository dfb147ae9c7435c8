# SPDX-License-Identifier: GPL-2.0-or-later
"""fpmd's configuration: yang/fpmd.yang, validated by libyang.

- a table of valid and invalid files (JSON and XML) and options, each with
  the exact error a user sees (file, line, path, reason), via fpmd -C;
- precedence: command line over file over the module's defaults, and the
  override is said;
- the built-in default (fpmd --show-default-config) and the running
  state (fpmctl show state) validate against the module with yanglint;
- the lab from a file alone; a bad file refuses to start;
- reload: an interface added and removed while traffic flows on the
  others with zero loss, a bad file refused with the running
  configuration kept, a table resize deferred and explained;
- the man page has a section for every leaf of the module.
"""
import json
import os
import re
import signal
import subprocess

import pytest

from lib.lab import (BUILDDIR, FPMD, REPO, Lab, ping, ping_result, ping_stream,
                     sh, wait_for, xdp_attached)
from lib.traffic import fwd4

YANG = os.path.join(REPO, "yang", "fpmd.yang")


def dryrun(tmp_path, name, text, *args):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    cmd = [FPMD, "-C"] + (["-f", str(path)] if text is not None else []) \
        + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    return r, path


# The size leaves, their options (None: the file only) and the limit each
# error names (yang/fpmd.yang), with values (value, "file" or "option")
# just past the limit, at zero and beyond the uint32 type. Each maximum
# is what the maps take with every ipv4-lookup / ipv6-lookup (fpmd was
# started at each): a route value's 24-bit index for nexthops and groups,
# a tbl24 entry's 24-bit group number for tbl8 groups.
SIZES = [
    ("max-routes-v4", "max-routes-v4",
     "1 to 16777216 (2^24) IPv4 routes",
     ((16777217, "option"), (67108865, "file"), (0, "file"),
      (4294967296, "option"))),
    ("max-routes-v6", "max-routes-v6",
     "1 to 16777216 (2^24) IPv6 routes",
     ((16777217, "file"), (0, "option"))),
    ("max-nexthops", "max-nexthops",
     "1 to 16777216 (2^24) nexthops: a route value holds a 24-bit nexthop "
     "index",
     ((16777217, "option"), (99999999999, "file"))),
    ("max-groups", "max-groups",
     "1 to 16777216 (2^24) groups: a route value holds a 24-bit group "
     "index",
     ((16777217, "file"), (0, "option"))),
    ("ipv4-tbl8-groups", None,
     "1 to 16777215 (2^24 - 1) tbl8 groups: a tbl24 entry holds a 24-bit "
     "group number",
     ((16777216, "file"), (0, "file"))),
    ("max-neighbors", "max-neighbors",
     "1 to 16777216 (2^24) neighbors per family",
     ((16777217, "option"), (-1, "option"), (16777217, "file"))),
]

# (case, file name, content, extra options, expected error or None). A
# tuple is what libyang's releases say apart (Debian 12's 2.1, Debian 13's
# 3.12, forky's 6.4): any one of them.
CASES = [
    ("misspelled leaf", "typo.json",
     '{"fpmd:fpmd": {\n  "fpm": {\n    "prot": 2620\n  }\n}}', (),
     'typo.json:3: /fpmd:fpmd/fpm: Node "prot" not found as a child of '
     '"fpm" node.'),
    ("misspelled container", "top.json",
     '{"fpmd:fpmd": {"interface": {"name": "eth0"}}}', (),
     'top.json:1: /fpmd:fpmd: Node "interface" not found as a child of '
     '"fpmd" node.'),
    ("wrong type", "type.json",
     '{"fpmd:fpmd": {"behaviour": {"keep-forwarding": "yes"}}}', (),
     'type.json:1: /fpmd:fpmd/behaviour/keep-forwarding: Invalid '
     'non-boolean-encoded boolean value "yes".'),
    ("wrong type (number)", "port.json",
     '{"fpmd:fpmd": {"fpm": {"port": "abc"}}}', (),
     'port.json:1: /fpmd:fpmd/fpm/port: Invalid non-number-encoded uint16 '
     'value "abc".'),
    ("out of range", "range.json",
     '{"fpmd:fpmd": {"fpm": {"settle-time": 5}}}', (),
     'range.json:1: /fpmd:fpmd/fpm/settle-time: Unsatisfied range - value '
     '"5" is out of the allowed range.'),
    ("unknown interface mode", "mode.json",
     '{"fpmd:fpmd": {\n  "interfaces": {"interface": [\n'
     '    {"name": "eth0", "xdp-mode": "turbo"}]}}}', (),
     "mode.json:3: /fpmd:fpmd/interfaces/interface[name='eth0']/xdp-mode: "
     'Invalid enumeration value "turbo".'),
    ("missing mandatory node", "mandatory.json",
     '{"fpmd:fpmd": {"logging": {"target": "file"}}}', (),
     'mandatory.json: /fpmd:fpmd/logging/file: Mandatory node "file" '
     'instance does not exist.'),
    ("missing list key", "nokey.json",
     '{"fpmd:fpmd": {"interfaces": {"interface": [{"enabled": true}]}}}', (),
     'nokey.json:1: /fpmd:fpmd/interfaces/interface: List instance is '
     'missing its key "name".'),
    ("duplicate interface", "dup.json",
     '{"fpmd:fpmd": {"interfaces": {"interface": '
     '[{"name": "eth0"}, {"name": "eth0"}]}}}', (),
     'Duplicate instance of "interface".'),
    ("interface name too long", "long.json",
     '{"fpmd:fpmd": {"interfaces": {"interface": '
     '[{"name": "averyveryverylongname"}]}}}', (),
     'long.json:1: /fpmd:fpmd/interfaces/interface/name: Unsatisfied length'
     ' - string "averyveryverylongname" length is not allowed.'),
    # Not a trailing comma: libyang 3 on accepts {"port": 2620,}.
    ("JSON syntax", "syntax.json",
     '{"fpmd:fpmd": {"behaviour": {"keep-forwarding": tru}}}', (),
     ('syntax.json:1: /fpmd:fpmd/behaviour: Invalid character sequence '
      '"tru}}}", expected a JSON value.',
      'syntax.json:1: /fpmd:fpmd: Invalid character sequence "tru}}}", '
      'expected a JSON value.')),
    # The input libyang quotes spans lines: still one line, the third.
    ("JSON syntax over lines", "lines.json",
     '{"fpmd:fpmd": {\n  "fpm": {\n    "port" 2620\n  }\n}}', (),
     tuple("lines.json:3: " + where + ': Invalid character sequence "2620 '
           '} }}", expected a JSON ' + what + " name-separator ':'."
           for where, what in (("/fpmd:fpmd", "object's"),
                               ("/fpmd:fpmd/fpm", "value"),
                               ("/fpmd:fpmd", "value")))),
    ("state in a config file", "state.json",
     '{"fpmd:fpmd": {"state": {"version": "1"}}}', (),
     'state.json:1: /fpmd:fpmd/state: Unexpected data state node "state" '
     'found.'),
    ("socket mode", "perm.json",
     '{"fpmd:fpmd": {"control": {"socket": {"mode": "0999"}}}}', (),
     tuple('perm.json:1: /fpmd:fpmd/control/socket/mode: Unsatisfied '
           f'pattern - "0999" does not {verb} "0?[0-7]{{3}}".'
           for verb in ("conform to", "match"))),
    ("unknown socket owner", "owner.json",
     '{"fpmd:fpmd": {"control": {"socket": {"owner": "nosuchuser"}}}}', (),
     "owner.json: /fpmd:fpmd/control/socket/owner: user 'nosuchuser' does "
     "not exist"),
    ("relative socket path", "rel.json",
     '{"fpmd:fpmd": {"plugin": {"socket": {"path": "plugin.sock"}}}}', (),
     tuple('rel.json:1: /fpmd:fpmd/plugin/socket/path: Unsatisfied '
           f'pattern - "plugin.sock" does not {verb} "/.*".'
           for verb in ("conform to", "match"))),
    ("one path for two sockets", "same.json",
     '{"fpmd:fpmd": {"plugin": {"socket": {"path": "/run/x.sock"}}, '
     '"control": {"socket": {"path": "/run/x.sock"}}}}', (),
     "same.json: /fpmd:fpmd/plugin/socket/path: '/run/x.sock' is also the "
     "control socket"),
    ("bad FPM address", "addr.json",
     '{"fpmd:fpmd": {"fpm": {"address": ["127.0.0.1", "300.1.1.1"]}}}', (),
     'addr.json:1: /fpmd:fpmd/fpm/address: Invalid union value "300.1.1.1" '
     '- no matching subtype found.'),
    ("unknown module", "module.json", '{"frr:fpmd": {}}', (),
     'module.json:1: /fpmd:fpmd: No module named "frr" in the context.'),
    ("empty file", "empty.json", "", (),
     "empty.json: empty file (an empty configuration is {} in JSON)"),
    ("XML misspelled leaf", "bad.xml",
     '<fpmd xmlns="urn:fpmd:yang:fpmd">\n  <fpm>\n    <port>2620</port>\n'
     '    <hold>5</hold>\n  </fpm>\n</fpmd>\n', (),
     'bad.xml:4: /fpmd:fpmd/fpm: Node "hold" not found as a child of "fpm" '
     'node.'),
    ("option: unknown mode", "-", None, ("--xdp-mode", "turbo"),
     '--xdp-mode turbo: /fpmd:fpmd/xdp-mode: Invalid enumeration value '
     '"turbo".'),
    ("option: out of range", "-", None, ("--guard-interval", "5"),
     '--guard-interval 5: /fpmd:fpmd/behaviour/guard-interval: Unsatisfied '
     'range - value "5" is out of the allowed range.'),
    ("option: port", "-", None, ("--fpm-port", "70000"),
     '--fpm-port 70000: /fpmd:fpmd/fpm/port: Value "70000" is out of type '
     'uint16 min/max bounds.'),
    ("option: log target", "-", None, ("--log", "bogus"),
     '--log bogus: /fpmd:fpmd/logging/target: Invalid enumeration value '
     '"bogus".'),
    ("option: interface name", "-", None, ("-i", "a/b"),
     '--interface a/b: /fpmd:fpmd/interfaces/interface/name: Unsatisfied '
     'pattern'),
    # Sizes the maps cannot have: the leaf and its limit, from the file
    # and from the options (SIZES), below the type's bounds or beyond.
    *[(f"size: {leaf} {v} ({how})", "size.json",
       None if how == "option" else
       json.dumps({"fpmd:fpmd": {"tables": {leaf: v}}}),
       (f"--{opt}", str(v)) if how == "option" else (),
       (f"--{opt} {v}: " if how == "option" else "size.json:1: ") +
       f"/fpmd:fpmd/tables/{leaf}: out of range: {limit}")
      for leaf, opt, limit, values in SIZES
      for v, how in values],
    # Valid ones: None is "configuration OK".
    ("empty configuration", "empty-ok.json", "{}", (), None),
    ("full JSON", "full.json", json.dumps({"fpmd:fpmd": {
        "xdp-mode": "generic",
        "interfaces": {"interface": [
            {"name": "eth0"}, {"name": "eth1", "xdp-mode": "native"},
            {"name": "eth2", "enabled": False}]},
        "fpm": {"address": ["127.0.0.1", "::1"], "port": 2621,
                "settle-time": 500, "hold-time": 0},
        "plugin": {"enabled": False},
        "control": {"socket": {"path": "/run/fpmd/ctl.sock",
                               "group": "root", "mode": "0600"}},
        "tables": {"max-routes-v4": 2000000, "max-neighbors": 1024},
        "behaviour": {"keep-forwarding": True,
                      "allow-netfilter-bypass": True,
                      "guard-interval": 250},
        "logging": {"target": "file", "file": "/var/log/fpmd.log",
                    "level": "debug"}}}), (), None),
    ("XML", "good.xml",
     '<fpmd xmlns="urn:fpmd:yang:fpmd">\n  <interfaces><interface>'
     '<name>eth0</name><xdp-mode>native</xdp-mode></interface></interfaces>'
     '\n  <fpm><address>::1</address><port>2621</port></fpm>\n</fpmd>\n',
     (), None),
    ("options only", "-", None,
     ("-i", "eth0", "--no-fpm", "--log", "file:/tmp/x.log", "-D"), None),
]


@pytest.mark.parametrize("case,name,text,args,expected", CASES,
                         ids=[c[0] for c in CASES])
def test_config_table(tmp_path, case, name, text, args, expected):
    r, path = dryrun(tmp_path, name, text, *args)
    if expected is None:
        assert r.returncode == 0, f"{case}: refused: {r.stderr}"
        assert "configuration OK" in r.stderr, r.stderr
        # What -C prints is the effective configuration, valid YANG data.
        eff = tmp_path / "effective.json"
        eff.write_text(r.stdout)
        y = sh(f"yanglint -t config {YANG} {eff}", check=False)
        assert y.returncode == 0, f"{case}: {y.stderr}\n{r.stdout}"
        return
    assert r.returncode == 2, f"{case}: accepted (rc {r.returncode}): " \
                              f"{r.stdout}{r.stderr}"
    err = r.stderr.strip()
    assert err.startswith("fpmd: "), err
    alternatives = expected if isinstance(expected, tuple) else (expected,)
    if text is not None:
        # Named by the path given, then line and node.
        alternatives = tuple(e.replace(name, str(path), 1)
                             if e.startswith(name) else e
                             for e in alternatives)
    assert any(e in err for e in alternatives), \
        f"{case}:\n expected: {' or '.join(alternatives)}\n actual:   {err}"
    assert len(err.splitlines()) == 1, f"{case}: one error line: {err}"


def test_missing_file_named(tmp_path):
    missing = tmp_path / "nope.json"
    r = subprocess.run([FPMD, "-C", "-f", str(missing)], capture_output=True,
                       text=True, timeout=10)
    assert r.returncode == 2
    assert r.stderr.strip() == \
        f"fpmd: {missing}: cannot open: No such file or directory"


def test_precedence_command_line_file_default(tmp_path):
    doc = {"fpmd:fpmd": {"fpm": {"port": 2700, "address": ["10.0.0.1"]},
                         "behaviour": {"guard-interval": 500},
                         "interfaces": {"interface": [{"name": "eth9"}]}}}
    r, path = dryrun(tmp_path, "p.json", json.dumps(doc), "--fpm-port",
                     "2621", "-i", "eth0", "--fpm-address", "::1")
    assert r.returncode == 0, r.stderr
    eff = json.loads(r.stdout)["fpmd:fpmd"]
    assert eff["fpm"]["port"] == 2621, "command line must win over the file"
    assert eff["fpm"]["address"] == ["::1"], eff
    assert eff["behaviour"]["guard-interval"] == 500, "file over default"
    assert [i["name"] for i in eff["interfaces"]["interface"]] == ["eth0"]
    notes = r.stderr
    assert f"--fpm-port 2621 overrides fpm/port = 2700 from {path}" in notes
    assert f"--interface eth0 overrides interfaces/interface from {path}" \
        in notes
    assert f"--fpm-address overrides fpm/address from {path}" in notes
    # The same value as the file's is no override, and a default is none.
    r, _ = dryrun(tmp_path, "p.json", json.dumps(doc), "--fpm-port", "2700",
                  "--fpm-settle", "100")
    assert "overrides" not in r.stderr, r.stderr


def test_default_config_validates_and_is_complete(tmp_path):
    r = subprocess.run([FPMD, "--show-default-config"], capture_output=True,
                       text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    path = tmp_path / "default.json"
    path.write_text(r.stdout)
    y = sh(f"yanglint -t config {YANG} {path}", check=False)
    assert y.returncode == 0, y.stderr
    top = json.loads(r.stdout)["fpmd:fpmd"]
    # Sane defaults for everything, and no interface: fpmd never attaches
    # to an interface nobody named.
    assert "interfaces" not in top
    # libyang 3 on keeps a leaf-list ordered by the system sorted.
    fpm = dict(top["fpm"], **{"allowed-users":
                              sorted(top["fpm"]["allowed-users"])})
    assert fpm == {"enabled": True, "address": ["127.0.0.1"],
                   "port": 2620, "settle-time": 3000,
                   "hold-time": 300, "route-status": False,
                   "allowed-users": ["frr", "root"]}
    assert top["control"]["socket"] == {"path": "/run/fpmd/fpmd.sock",
                                        "owner": "root", "group": "frr",
                                        "mode": "0660"}
    assert top["tables"]["max-nexthops"] == 65536
    assert top["behaviour"]["keep-forwarding"] is False
    # Reading the default back as a file gives the same configuration.
    r2 = subprocess.run([FPMD, "-C", "-f", str(path)], capture_output=True,
                        text=True, timeout=10)
    assert r2.returncode == 0, r2.stderr


def test_man_page_has_every_leaf():
    page = open(os.path.join(BUILDDIR, "doc", "fpmd.conf.5")).read()
    sections = set(re.findall(r"^\.SS (\S+)$", page, re.M))
    text = open(YANG).read()
    leaves = set(re.findall(r"^\s*leaf(?:-list)? ([a-z0-9-]+) \{", text,
                            re.M))
    named = {s.rsplit("/", 1)[-1] for s in sections}
    assert leaves <= named, f"leaves without a section: {leaves - named}"
    # Spot checks: the path, the default and the description are there.
    m = re.search(r"^\.SS fpm/port\n(.*?)^\.SS ", page, re.M | re.S)
    assert m and "Default: 2620" in m.group(1) and "TCP port" in m.group(1)
    assert ".SS state/interface/counter/packets" in page
    # A leaf-list's defaults, all of them.
    m = re.search(r"^\.SS fpm/allowed-users\n(.*?)^\.SS ", page, re.M | re.S)
    assert m and "Default: root, frr" in m.group(1), m and m.group(1)


# ---- with a daemon ------------------------------------------------------------

@pytest.fixture
def lab():
    lab = Lab()
    try:
        yield lab
    finally:
        lab.cleanup()


def state(d):
    return json.loads(d.ctl("show", "state").stdout)["fpmd:fpmd"]["state"]


def iface_state(d):
    return {i["name"]: i for i in state(d).get("interface", [])}


def test_bad_file_refuses_to_start(lab, tmp_path):
    doc = lab.config_doc()
    doc["fpmd:fpmd"]["interfaces"]["interface"][0]["xdp-mode"] = "turbo"
    path = lab.write_config(doc)
    r = subprocess.run([FPMD, "--netns", lab.r1.name, "-f", path],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 2
    assert f"{path}:" in r.stderr and "xdp-mode" in r.stderr and \
        'Invalid enumeration value "turbo"' in r.stderr, r.stderr
    assert not os.path.exists(lab.pin), "maps were created"
    assert not xdp_attached(lab.r1, "r1-eth0")


def test_lab_from_file_and_state_validates(lab, tmp_path):
    path = lab.write_config(lab.config_doc(fpm={"enabled": False}))
    d = lab.fpmd(config=path)
    assert f"config: from {path}" in d.logtext()
    lab.routes_and_neighbors(d)
    lab.warm_kernel_neighbors()
    f0 = fwd4(lab.r1)
    assert ping(lab.h1, lab.H2_V4, 5, 0.05) == 5
    assert fwd4(lab.r1) == f0, "the kernel forwarded: XDP not in use"

    r = d.ctl("--json", "show", "state")
    doc = tmp_path / "state.json"
    doc.write_text(r.stdout)
    y = sh(f"yanglint -f json -t data {YANG} {doc}", check=False)
    assert y.returncode == 0, f"state does not validate: {y.stderr}"
    st = json.loads(r.stdout)["fpmd:fpmd"]["state"]
    assert st["config-source"] == path
    ifs = {i["name"]: i for i in st["interface"]}
    assert set(ifs) == {"r1-eth0", "r1-eth1"}
    for name, i in ifs.items():
        assert i["attached"] is True and i["oper-status"] == "up", i
        assert i["xdp-mode"] == "native"
    fwd = {c["reason"]: int(c["packets"]) for c in
           ifs["r1-eth0"]["counter"]}["forwarded"]
    assert fwd >= 5, ifs["r1-eth0"]["counter"]
    assert st["feeds"]["fpm"]["enabled"] is False
    assert st["feeds"]["plugin"]["listen"] == d.plugin_sock
    assert {s["name"]: s["count"] for s in st["routes"]["source"]}[
        "static"] == 4
    # The check can fail: a state the module does not allow is refused.
    bad = json.loads(r.stdout)
    bad["fpmd:fpmd"]["state"]["interface"][0]["oper-status"] = "sideways"
    doc.write_text(json.dumps(bad))
    y = sh(f"yanglint -f json -t data {YANG} {doc}", check=False)
    assert y.returncode != 0 and "sideways" in y.stderr, y.stderr

    # The running configuration is the file's, as YANG data.
    run = json.loads(d.ctl("show", "config").stdout)["fpmd:fpmd"]
    assert run["fpm"] == {"enabled": False}
    assert run["bpffs-dir"] == lab.pin


def add_h3(lab):
    h3 = lab.add_ns(lab.prefix + "h3")
    # An ifindex above FPMD_IFINDEX_DIRECT (4096): the program finds this
    # interface in the ifaces hash, not in its array copy.
    lab.link(lab.r1, "r1-eth2", h3, "h3-eth0", index=5000)
    h3.run("ip addr add 172.16.103.1/24 dev h3-eth0 && "
           "ip route add default via 172.16.103.3 && "
           "ethtool -K h3-eth0 tx off gro on >/dev/null")
    lab.r1.run("ip addr add 172.16.103.3/24 dev r1-eth2")
    return h3


def test_reload_interfaces_zero_loss_on_others(lab, tmp_path):
    h3 = add_h3(lab)
    base = dict(fpm={"enabled": False})
    path = lab.write_config(lab.config_doc(**base))
    d = lab.fpmd(config=path)
    lab.routes_and_neighbors(d, v6=False)
    d.ctl("route", "add", "172.16.103.0/24", "dev", "r1-eth2")
    d.ctl("neighbor", "add", "172.16.103.1", "lladdr", h3.mac("h3-eth0"),
          "dev", "r1-eth2")
    lab.warm_kernel_neighbors()
    h3.run("ping -c1 -W1 172.16.103.3 >/dev/null", check=False)
    assert ping(lab.h1, lab.H2_V4, 3, 0.05) == 3
    assert set(iface_state(d)) == {"r1-eth0", "r1-eth1"}

    f0 = fwd4(lab.r1)
    stream = ping_stream(lab.h1, lab.H2_V4, 500)
    try:
        # Add r1-eth2 (by fpmctl reload).
        lab.write_config(lab.config_doc(
            ("r1-eth0", "r1-eth1", "r1-eth2"), **base))
        d.ctl("reload")
        wait_for(lambda: iface_state(d).get("r1-eth2", {}).get("attached"),
                 what="r1-eth2 attached after reload")
        assert xdp_attached(lab.r1, "r1-eth2")
        assert ping(h3, lab.H1_V4, 3, 0.05) == 3
        c = d.counter("r1-eth2", "forwarded")
        assert c >= 3, f"h3's pings did not take the fast path ({c})"

        # A bad file is refused with its error; nothing changes.
        bad = lab.config_doc(("r1-eth0", "r1-eth1"), **base)
        bad["fpmd:fpmd"]["interfaces"]["interface"][1]["xdp-mode"] = "turbo"
        bpath = lab.write_config(bad)
        r = d.ctl("reload", check=False)
        assert r.returncode != 0
        assert f"{bpath}:" in r.stderr and "xdp-mode" in r.stderr and \
            "turbo" in r.stderr, r.stderr
        assert "keeping the running configuration" in d.logtext()
        assert iface_state(d)["r1-eth2"]["attached"] is True
        assert xdp_attached(lab.r1, "r1-eth2")

        # Remove r1-eth2 again (by SIGHUP), and ask for a bigger table.
        lab.write_config(lab.config_doc(
            tables={"max-routes-v4": 2000000}, **base))
        d.proc.send_signal(signal.SIGHUP)
        wait_for(lambda: not xdp_attached(lab.r1, "r1-eth2"),
                 what="r1-eth2 detached after SIGHUP")
        wait_for(lambda: "r1-eth2" not in iface_state(d),
                 what="r1-eth2 gone from the state")
        log = d.logtext()
        assert "config: interface r1-eth2 removed" in log
        assert "tables/max-routes-v4 1100000 -> 2000000 takes effect when " \
            "fpmd restarts" in log and "rebuild" in log, log[-2000:]
        # h3 still reaches h1, now by the kernel.
        k0 = fwd4(lab.r1)
        assert ping(h3, lab.H1_V4, 3, 0.05) == 3
        assert fwd4(lab.r1) - k0 >= 3, "removed interface not on kernel path"
    except BaseException:
        stream.kill()
        stream.wait()
        raise
    sent, got, out = ping_result(stream, timeout=30)
    assert sent == 500 and got == sent, f"h1->h2 lost {sent - got}/{sent}"
    # h1 <-> h2 never left the fast path (h3's last pings took the kernel).
    assert fwd4(lab.r1) - f0 <= 6 + 2, \
        f"kernel forwarded {fwd4(lab.r1) - f0} packets"


def lock_file(pin):
    esc = pin.strip("/").replace("-", "\\x2d").replace("/", "-")
    return f"/run/fpmd/{esc}.pid"


def test_size_beyond_the_maps_refuses_to_start(lab):
    """A table size the maps cannot have, on the command line: fpmd names
    the leaf and its limit and exits before it creates or attaches
    anything (it once failed in map creation with EINVAL)."""
    r = subprocess.run([FPMD, "--netns", lab.r1.name, "-b", lab.pin, "-s",
                        os.path.join(lab.tmp, "fpmd.sock"), "-i", "r1-eth0",
                        "--max-routes-v4", "67108865"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 2, r.stderr
    assert "fpmd: --max-routes-v4 67108865: /fpmd:fpmd/tables/max-routes-v4:" \
        " out of range: 1 to 16777216 (2^24) IPv4 routes" in r.stderr, \
        r.stderr
    assert not os.path.exists(lab.pin), "maps were created"
    assert not os.path.exists(lock_file(lab.pin))
    assert not xdp_attached(lab.r1, "r1-eth0")


def sizes(d):
    s = d.show("summary")
    return {k: s[k] for k in ("maxRoutesV4", "maxRoutesV6", "maxNexthops",
                              "maxGroups")}


def v4_routes(d):
    return {p: r for p, r in d.show("routes").items() if ":" not in p}


def test_reload_refuses_size_beyond_the_maps(lab):
    """A reload (fpmctl reload, SIGHUP) of a file with a size the maps
    cannot have is refused naming the leaf and its limit: fpmd keeps its
    configuration, its tables and XDP forwarding."""
    base = dict(fpm={"enabled": False})
    path = lab.write_config(lab.config_doc(
        tables={"max-routes-v4": 200000, "max-nexthops": 4096}, **base))
    d = lab.fpmd(config=path)
    lab.routes_and_neighbors(d, v6=False)
    lab.warm_kernel_neighbors()
    want = sizes(d)
    assert want["maxRoutesV4"] == 200000 and want["maxNexthops"] == 4096
    running = d.ctl("show", "config").stdout
    # IPv4 only: IPv6 link-local addresses come (local routes) meanwhile.
    routes = v4_routes(d)

    for leaf, v, limit in (
            ("max-routes-v4", 67108865, "1 to 16777216 (2^24) IPv4 routes"),
            ("max-nexthops", 16777217, "1 to 16777216 (2^24) nexthops: a "
             "route value holds a 24-bit nexthop index")):
        lab.write_config(lab.config_doc(tables={leaf: v}, **base))
        log0 = len(d.logtext())
        r = d.ctl("reload", check=False)
        assert r.returncode != 0, r.stdout
        assert re.search(rf"{re.escape(path)}:\d+: /fpmd:fpmd/tables/{leaf}: "
                         rf"out of range: {re.escape(limit)}", r.stderr), \
            r.stderr
        assert "keeping the running configuration" in d.logtext()[log0:]
        assert d.proc.poll() is None, d.logtext()
        assert sizes(d) == want
        assert d.ctl("show", "config").stdout == running
        assert v4_routes(d) == routes
        f0 = fwd4(lab.r1)
        assert ping(lab.h1, lab.H2_V4, 3, 0.05) == 3
        assert fwd4(lab.r1) == f0, "the kernel forwarded: XDP not in use"


def test_bpffs_mounted_when_missing(tmp_path):
    """A machine without bpffs at /sys/fs/bpf: fpmd mounts it and pins.

    Runs in a private mount namespace with /sys/fs/bpf unmounted, so the
    bpffs fpmd mounts is a new one that dies with the namespace."""
    log, sock = tmp_path / "fpmd.log", tmp_path / "ctl.sock"
    pin = f"/sys/fs/bpf/fpmd-mnt-{os.getpid()}"
    script = f"""
        umount /sys/fs/bpf 2>/dev/null
        grep -q ' /sys/fs/bpf bpf ' /proc/mounts && exit 90
        {FPMD} -b {pin} -s {sock} --no-fpm --no-plugin \\
            --log file:{log} & p=$!
        for i in $(seq 100); do
            grep -q 'started:' {log} 2>/dev/null && break; sleep 0.1
        done
        grep ' /sys/fs/bpf bpf ' /proc/mounts || echo NOT-MOUNTED
        ls {pin}
        kill $p; wait $p
    """
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh",
                        "-c", script], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode != 90, "could not unmount /sys/fs/bpf privately"
    text = log.read_text()
    assert "bpffs: mounted a bpf filesystem at /sys/fs/bpf" in text, text
    assert "NOT-MOUNTED" not in r.stdout, r.stdout
    assert "routes_v4" in r.stdout and "nexthops" in r.stdout, r.stdout
    assert not os.path.exists(pin), "pinned into the machine's own bpffs"


def test_pin_dir_not_on_bpffs(tmp_path):
    """A bpffs-dir outside any bpffs: refused, with what to do about it."""
    pin = tmp_path / "pins"
    r = subprocess.run([FPMD, "-b", str(pin), "-s", str(tmp_path / "s"),
                        "--no-fpm", "--no-plugin"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode != 0
    assert f"bpffs: {tmp_path} (bpffs-dir {pin}) is not on a bpf " \
        "filesystem" in r.stderr, r.stderr
    assert not pin.exists()
