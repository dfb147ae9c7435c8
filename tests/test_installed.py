# SPDX-License-Identifier: GPL-2.0-or-later
"""The INSTALLED Debian packages fpmd and fpmd-frr, not the build tree.

Runs when FPMD_TEST_INSTALLED=1 (.ci/run sets it after installing the
packages built by scripts/package.sh); then anything missing is a
failure, never a skip. Without the variable the whole file is skipped.

- the files are where the packages put them, /etc/fpmd/fpmd.json is a
  conffile, fpmd-frr depends on exactly the installed frr;
- systemd-analyze verify accepts the installed unit;
- /usr/sbin/fpmd with no options reads /etc/fpmd/fpmd.json and attaches
  to nothing;
- a router: the installed fpmd (config file naming the lab's
  interfaces), real zebra loading the module by name (-M fpmd_zebra) and
  staticd; a static route from vtysh shows as forwarding in the installed
  fpmctl, and XDP forwards a ping. Further checks of the running router
  (offload flags, metrics, notify) take the `router` fixture;
- the packages built for each other FRR release the tests run
  (FPMD_FRR_SUITES; .ci/run names them in FPMD_SUITE_PACKAGES) install in
  a throwaway copy of that release's root and work there.
"""
import json
import os
import re
import shutil
import subprocess

import pytest

from lib.frr import FrrLab, fib_offloaded, wait_marks
from lib.lab import Fpmd, ping, sh, wait_for
from lib.metrics import parse, promtool, scrape, val
from lib.notify import Notify

if os.environ.get("FPMD_TEST_INSTALLED") != "1":
    pytest.skip("FPMD_TEST_INSTALLED=1 not set: the installed packages are "
                "tested by .ci/run after scripts/package.sh and installing "
                "them", allow_module_level=True)

SBIN_FPMD = "/usr/sbin/fpmd"
BIN_FPMCTL = "/usr/bin/fpmctl"
STOP = "/usr/libexec/fpmd/fpmd-stop"
UNIT = "/lib/systemd/system/fpmd.service"
CONF = "/etc/fpmd/fpmd.json"
YANG = "/usr/share/yang/fpmd.yang"
MODULE_DIR = "/usr/lib/x86_64-linux-gnu/frr/modules"
MODULE = os.path.join(MODULE_DIR, "fpmd_zebra.so")

H2_NET, H2_DST = "10.99.0.0/24", "10.99.0.1"


def dpkg_query(fmt, pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f", fmt, pkg],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"dpkg-query {pkg}: {r.stderr}"
    return r.stdout


# ---- files and package metadata -------------------------------------------

# (package, path, executable)
FILES = [
    ("fpmd", SBIN_FPMD, True),
    ("fpmd", BIN_FPMCTL, True),
    ("fpmd", STOP, True),
    ("fpmd", UNIT, False),
    ("fpmd", CONF, False),
    ("fpmd", YANG, False),
    ("fpmd", "/usr/share/doc/fpmd/examples/fpmd.json", False),
    ("fpmd", "/usr/share/man/man8/fpmd.8.gz", False),
    ("fpmd", "/usr/share/man/man8/fpmctl.8.gz", False),
    ("fpmd", "/usr/share/man/man5/fpmd.conf.5.gz", False),
    ("fpmd-frr", MODULE, False),
    ("fpmd-frr", "/usr/share/doc/fpmd-frr/README", False),
]


@pytest.mark.parametrize("pkg,path,exe", FILES, ids=[f[1] for f in FILES])
def test_file_installed(pkg, path, exe):
    assert os.path.isfile(path), f"{path} missing"
    if exe:
        assert os.access(path, os.X_OK), f"{path} not executable"
    listed = subprocess.run(["dpkg", "-L", pkg], capture_output=True,
                            text=True, timeout=30).stdout.split()
    assert path in listed, f"{path} not in dpkg -L {pkg}"


def test_conffile():
    conffiles = dpkg_query("${Conffiles}", "fpmd").split()
    assert CONF in conffiles, conffiles


def test_fpmd_frr_pins_frr():
    frr = dpkg_query("${Version}", "frr")
    deps = [d.strip() for d in dpkg_query("${Depends}", "fpmd-frr")
            .split(",")]
    assert f"frr (= {frr})" in deps, deps


# ---- the packages of other Debian releases ----------------------------------
# .ci/run builds fpmd and fpmd-frr for each suite of FPMD_FRR_SUITES in
# that suite's root (scripts/package.sh --suite SUITE DIR) and names DIR
# in FPMD_SUITE_PACKAGES. Each is installed in a throwaway copy of the
# suite's root (scripts/frr-root.sh --scratch: overlayfs, an empty network
# namespace), as an operator of that release would install them.

FRR_SUITES = os.environ.get("FPMD_FRR_SUITES", "trixie forky").split()
ROOT_SH = os.path.join(os.path.dirname(__file__), "..", "scripts",
                       "frr-root.sh")
# Inside the scratch root: install both, check fpmd and its configuration
# with that release's libraries, and start that release's zebra with the
# module named as an operator would (-M fpmd_zebra).
SUITE_CHECK = r"""
set -e
cd "$1"
dpkg -i ./fpmd_*.deb ./fpmd-frr_*.deb >dpkg.log 2>&1 || { cat dpkg.log; exit 1; }
dpkg-query -W -f '${Version}\n' frr
dpkg-query -W -f '${Depends}\n' fpmd-frr
fpmd --version
fpmd -C >/dev/null
install -d -o frr -g frr /run/frr
timeout 5 /usr/lib/frr/zebra -M fpmd_zebra:"$1/plugin.sock" --log stdout \
    >zebra.log 2>&1 || [ $? = 124 ]
grep "fpmd plugin" zebra.log
"""


def suite_packages(suite, tmp_path):
    """fpmd and fpmd-frr built for SUITE install in that release, fpmd-frr
    depends on exactly its frr, fpmd reads its configuration with that
    release's libyang, and its zebra loads the module by name."""
    top = os.environ.get("FPMD_SUITE_PACKAGES")
    assert top, ("FPMD_SUITE_PACKAGES is not set: .ci/run builds each "
                 "suite's packages (scripts/package.sh --suite) and names "
                 "their directory there")
    d = os.path.join(top, suite)
    debs = [f for f in os.listdir(d) if f.endswith(".deb") and
            "dbgsym" not in f and f.startswith(("fpmd_", "fpmd-frr_"))]
    assert len(debs) == 2, f"{d}: {sorted(os.listdir(d))}"
    for f in debs:
        shutil.copy(os.path.join(d, f), tmp_path)
    os.chmod(tmp_path, 0o755)
    r = subprocess.run(["sh", ROOT_SH, "--scratch", suite, str(tmp_path),
                        "sh", "-c", SUITE_CHECK, "sh", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    out = r.stdout
    assert r.returncode == 0, out + r.stderr
    frr, dep_line, version = out.splitlines()[:3]
    deps = [x.strip() for x in dep_line.split(",")]
    assert f"frr (= {frr})" in deps, (frr, deps)
    assert version.startswith("fpmd "), out
    major_minor = re.match(r"\d+\.\d+", frr).group(0)
    assert re.search(r"fpmd plugin: loaded \(built for FRR " +
                     re.escape(major_minor), out), out
    assert "not loading" not in out, out


# No suites (FPMD_FRR_SUITES="": .ci/fresh's brand-new root has no roots
# of other releases), no test; an empty parameter set would be a skip.
if FRR_SUITES:
    test_suite_packages = pytest.mark.parametrize("suite", FRR_SUITES)(
        suite_packages)


def test_man_pages_say_package_paths():
    text = sh("zcat /usr/share/man/man8/fpmd.8.gz").stdout
    assert "/etc/fpmd/fpmd.json" in text
    assert "/usr/local/etc/fpmd/fpmd.json" in text   # the source install
    assert "@sysconfdir@" not in text


def test_unit_verifies():
    if not shutil.which("systemd-analyze"):
        pytest.fail("systemd-analyze missing (apt-get install systemd)")
    r = subprocess.run(["systemd-analyze", "verify", UNIT],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr


# ---- fpmd with no options -------------------------------------------------------

def test_dryrun_reads_etc():
    r = subprocess.run([SBIN_FPMD, "-C"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    assert f"configuration OK ({CONF})" in r.stderr, r.stderr
    doc = json.loads(r.stdout)["fpmd:fpmd"]
    assert not doc.get("interfaces", {}).get("interface"), doc


def test_example_config_valid():
    ex = "/usr/share/doc/fpmd/examples/fpmd.json"
    r = subprocess.run([SBIN_FPMD, "-C", "-f", ex], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["fpmd:fpmd"]["interfaces"]["interface"]


@pytest.fixture
def plain_lab():
    lab = FrrLab()
    try:
        yield lab
    finally:
        lab.cleanup()


def test_no_options_attaches_nothing(plain_lab):
    """/usr/sbin/fpmd exactly as the unit runs it, in the lab's router
    namespace with interfaces it could take, and a mount namespace of its
    own (fresh bpffs, /run/fpmd) so it meets no other fpmd on the host."""
    lab = plain_lab
    log = os.path.join(lab.tmp, "noopt.out")
    script = ("mount -t bpf bpf /sys/fs/bpf && mkdir -p /run/fpmd && "
              "mount -t tmpfs tmpfs /run/fpmd && exec " + SBIN_FPMD)
    with open(log, "w") as out:
        p = subprocess.Popen(["nsenter", f"--net=/run/netns/{lab.r1.name}",
                              "unshare", "--mount", "--propagation",
                              "private", "sh", "-c", script],
                             stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: "started:" in open(log).read() or
                 p.poll() is not None, timeout=20, what="fpmd started")
        text = open(log).read()
        assert p.poll() is None, text
        assert f"config: from {CONF}" in text, text
        for i in ("r1-eth0", "r1-eth1"):
            assert "xdp" not in lab.r1.run(f"ip link show dev {i}").stdout
        # Its own view: no interface; FPM listening on 127.0.0.1.
        # -r: fpmd's root too (a chroot's, in scripts/fresh-check.sh).
        ctl = subprocess.run(["nsenter", "-t", str(p.pid), "-m", "-n", "-r",
                              BIN_FPMCTL, "--json", "show", "interfaces"],
                             capture_output=True, text=True, timeout=30)
        assert ctl.returncode == 0, ctl.stderr
        assert json.loads(ctl.stdout) in ({}, []), ctl.stdout
        assert "127.0.0.1:2620" in lab.r1.run("ss -Hltn").stdout
    finally:
        if p.poll() is None:
            p.terminate()
        p.wait(20)
    assert p.returncode == 0, open(log).read()


# ---- a router with the installed fpmd, module and fpmctl ----------------------

class InstalledFpmd(Fpmd):
    """tests/lib/lab.py's Fpmd with the installed fpmctl."""

    def ctl(self, *args, check=True):
        r = subprocess.run([BIN_FPMCTL, "-s", self.sock] +
                           [str(a) for a in args],
                           capture_output=True, text=True, timeout=30)
        if check and r.returncode != 0:
            raise RuntimeError(f"fpmctl {' '.join(map(str, args))} failed "
                               f"({r.returncode}): {r.stderr}")
        return r


class Router:
    """What the `router` fixture yields: lab, fpmd (InstalledFpmd), frr."""

    def __init__(self, lab, fpmd, frr, notify):
        self.lab, self.fpmd, self.frr = lab, fpmd, frr
        self.notify = notify  # the service manager's end of sd_notify


@pytest.fixture(scope="module")
def router():
    lab = FrrLab()
    try:
        lab.h2.run(f"ip addr add {H2_DST}/24 dev lo")
        # FPM off: the module is the feed here.
        conf = lab.write_config(lab.config_doc(fpm={"enabled": False},
                                               metrics={"enabled": True}))
        # As systemd runs it (Type=notify): NOTIFY_SOCKET is ours.
        notify = Notify(lab.tmp)
        d = InstalledFpmd(lab, lab.r1, (), config=conf, binary=SBIN_FPMD,
                          env=notify.env())
        lab.daemons.append(d)
        d.wait_ready(20)
        f = lab.frr(start=False, fpm=False)
        # By name, from FRR's module directory; the lab's socket.
        f.start_zebra(extra=["-M", f"fpmd_zebra:{d.plugin_sock}"])
        f.start("staticd")
        wait_for(lambda: d.show("plugin").get("replayState") == "complete",
                 timeout=20, what="the module's replay")
        f.configure(f"ip route {H2_NET} {lab.H2_V4}")
        lab.warm_kernel_neighbors()
        yield Router(lab, d, f, notify)
    finally:
        lab.cleanup()
        if 'notify' in locals():
            notify.close()


def test_module_loaded_by_name(router):
    log = router.frr.logtext()
    assert "fpmd plugin: loaded" in log, log[-3000:]
    assert "connected to fpmd" in log, log[-3000:]
    # zebra found it in its module directory, not by a path of ours.
    maps = open(f"/proc/{router.frr.pid('zebra')}/maps").read()
    assert MODULE in maps, "zebra did not map " + MODULE


def test_static_route_forwarded_by_xdp(router):
    lab, d = router.lab, router.fpmd

    def route():
        for e in d.show("routes").get(H2_NET, []):
            if e.get("source") == "plugin" and \
                    e.get("protocol") == "static" and \
                    e.get("installed") and e.get("state") == "forwarding":
                return e
        return None
    wait_for(route, timeout=15, what=f"{H2_NET} forwarding in fpmctl")
    text = d.ctl("show", "routes").stdout
    assert H2_NET in text and "forwarding" in text, text
    before = d.counter("r1-eth0", "forwarded")
    kernel = lab.r1.snmp("Ip", "ForwDatagrams")
    n = 10
    assert ping(lab.h1, H2_DST, n, 0.05) == n
    assert d.counter("r1-eth0", "forwarded") - before >= n
    assert lab.r1.snmp("Ip", "ForwDatagrams") == kernel, \
        "the kernel forwarded the pings, not XDP"


def test_version_is_package(router):
    """The running fpmd is the package's (not a build tree's)."""
    ver = dpkg_query("${Version}", "fpmd")
    out = subprocess.run([SBIN_FPMD, "--version"], capture_output=True,
                         text=True, timeout=30).stdout
    assert out.startswith(f"fpmd {ver} "), (out, ver)
    assert f"fpmd {ver} started:" in router.fpmd.logtext()
    assert os.readlink(f"/proc/{router.fpmd.proc.pid}/exe") == SBIN_FPMD


def test_offloaded_in_vtysh(router):
    """The operator's view: zebra marks the route XDP forwards as
    offloaded (the installed module, from the installed fpmd's status) and
    counts it in the summary as fibOffLoaded, as fpmd counts it."""
    f, d = router.frr, router.fpmd
    wait_marks(f, {H2_NET: True}, timeout=20)
    entry = [e for e in f.routes()[H2_NET] if e.get("selected")][0]
    assert entry["protocol"] == "static" and entry["offloaded"] is True, \
        entry
    forwarding = [p for p, es in d.show("routes").items() if ":" not in p
                  and any(e.get("source") == "plugin" and e.get("selected")
                          and e.get("state") in ("forwarding", "blackhole")
                          for e in es)]
    assert fib_offloaded(f) == len(forwarding) >= 1, \
        (fib_offloaded(f), forwarding)


def test_notify_protocol(router):
    """The installed fpmd told its NOTIFY_SOCKET READY=1 and a status line
    that names the interfaces it forwards on and zebra's settled replay."""
    n = router.notify
    n.until(lambda m: m.get("READY") == "1", what="READY=1")
    n.until(lambda m: "replay settled" in m.get("STATUS", ""),
            what="STATUS ... replay settled")
    st = n.statuses()[-1]
    assert "forwarding on 2 interfaces" in st, n.statuses()


def test_metrics_scraped(router):
    """The installed fpmd's metrics endpoint (on by the configuration, on
    127.0.0.1:9343 in the router's namespace): promtool accepts the text,
    the forwarded counter is fpmctl's, the route counts follow zebra's
    static route with its protocol."""
    lab, d = router.lab, router.fpmd
    assert ping(lab.h1, H2_DST, 3, 0.05) == 3
    text = scrape(lab.r1)
    rc, out = promtool(text)
    assert rc == 0 and not out.strip(), out
    s, _ = parse(text)
    fwd = d.counter("r1-eth0", "forwarded")
    assert val(s, "fpmd_packets_total", interface="r1-eth0",
               reason="forwarded") == fwd >= 3
    assert val(s, "fpmd_routes", family="ipv4", source="plugin",
               protocol="static", state="forwarding") == 1
    assert val(s, "fpmd_feed_connected", feed="plugin") == 1
