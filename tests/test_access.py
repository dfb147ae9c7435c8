# SPDX-License-Identifier: GPL-2.0-or-later
"""Who may talk to fpmd (issue 11, item 11).

The FPM listener is TCP on loopback: any local user could connect while
zebra is away and put routes into the fast path. fpmd asks the kernel
(sock_diag) which user owns the other end and accepts only
fpm/allowed-users (default root and frr, zebra's user). The plugin and
control sockets are Unix sockets: their file's owner, group and mode
decide, and a user outside them gets EACCES from the kernel.

Clients run as real users with setpriv inside r1's namespace.
"""
import grp
import os
import socket
import stat
import struct
import subprocess

import pytest

from lib.fpmwire import (RTA_DST, RTA_OIF, RTM_NEWROUTE, fpm_frame, nla, nlmsg,
                         rtmsg)
from lib.lab import PY, wait_for

NOBODY = "setpriv --reuid=nobody --regid=nogroup --clear-groups"
FRR = "setpriv --reuid=frr --regid=frr --init-groups"
ROOT = ""

ROUTE = "10.77.0.0/24"     # sent by allowed users
INTRUDER = "10.66.0.0/24"  # sent by refused ones


def route_frame(prefix, oif):
    """One FPM frame: RTM_NEWROUTE prefix dev oif (no gateway)."""
    net, plen = prefix.split("/")
    return fpm_frame(nlmsg(RTM_NEWROUTE, rtmsg(int(plen)) +
                           nla(RTA_DST, socket.inet_aton(net)) +
                           nla(RTA_OIF, struct.pack("=I", oif))))


# Sends stdin to the FPM port, then reports how the connection ended and
# its own source port (which fpmd's log line must name).
FPM_CLIENT = r"""
import socket, sys
data = sys.stdin.buffer.read()
s = socket.create_connection(("127.0.0.1", 2620), timeout=3)
port = s.getsockname()[1]
try:
    s.sendall(data)
    r = s.recv(1)
    how = "closed-by-peer" if r == b"" else "data"
except (ConnectionResetError, BrokenPipeError):
    how = "closed-by-peer"
except socket.timeout:
    how = "still-open"
print(how, port)
"""


def fpm_client(lab, as_user, data):
    """(how the connection ended, client port) for a client run as_user."""
    r = subprocess.run(
        ["ip", "netns", "exec", lab.r1.name, "sh", "-c",
         f"exec {as_user} {PY} -c '{FPM_CLIENT}'"],
        input=data, capture_output=True, timeout=30)
    assert r.returncode == 0, r.stderr.decode()
    how, port = r.stdout.decode().split()
    return how, int(port)


def fpm(d):
    return d.show("fpm")


def fpm_routes(d):
    return {p for p, rs in d.show("routes").items()
            if any(r["source"] == "fpm" for r in rs)}


def fed_routes(routes):
    """show routes without the kernel's local table (source kernel)."""
    return {p: [e for e in es if e["source"] != "kernel"]
            for p, es in routes.items()
            if any(e["source"] != "kernel" for e in es)}


def refused(lab, d, as_user, who):
    """A client as_user is refused: connection closed unread, a log line
    naming the user and its address:port, counted, no route taken."""
    before, routes = fpm(d), d.show("routes")
    assert INTRUDER not in routes
    log0 = len(d.logtext())
    how, port = fpm_client(lab, as_user, route_frame(
        INTRUDER, lab.r1.ifindex("r1-eth1")))
    assert how == "closed-by-peer", how
    line = wait_for(lambda: [x for x in d.logtext()[log0:].splitlines()
                             if "refused" in x], timeout=5,
                    what="refusal log line")[0]
    assert who in line and f"127.0.0.1:{port}" in line, line
    after = fpm(d)
    assert after["refused"] == before["refused"] + 1, after
    assert after["connections"] == before["connections"], after
    assert after["frames"] == before["frames"], after
    # The kernel's own local routes may come and go meanwhile (an IPv6
    # link-local address finishing DAD): every other route stays as it was.
    assert fed_routes(d.show("routes")) == fed_routes(routes), \
        d.show("routes")
    assert d.proc.poll() is None


def accepted(lab, d, as_user):
    before = fpm(d)
    how, _ = fpm_client(lab, as_user, route_frame(ROUTE, lab.r1.ifindex(
        "r1-eth1")))
    assert how == "still-open", how
    wait_for(lambda: ROUTE in fpm_routes(d), timeout=5,
             what=f"{ROUTE} from an allowed user")
    after = fpm(d)
    assert after["refused"] == before["refused"], after
    assert after["connections"] == before["connections"] + 1, after


def test_fpm_refuses_unprivileged_user(lab):
    d = lab.fpmd()
    # nobody first: while zebra is away is exactly when it matters.
    refused(lab, d, NOBODY, "nobody (uid 65534)")
    assert "not one of fpm/allowed-users" in fpm(d)["lastError"], fpm(d)
    state = d.show("state")["fpmd:fpmd"]["state"]["feeds"]["fpm"]
    assert state["refused"] == "1", state
    # zebra's user and root are let in by default.
    accepted(lab, d, FRR)
    accepted(lab, d, ROOT)
    # An unprivileged connection refused does not disturb the routes.
    refused(lab, d, NOBODY, "nobody (uid 65534)")
    assert ROUTE in fpm_routes(d)


@pytest.mark.parametrize("users,ok,bad,who", [
    (["nobody"], NOBODY, ROOT, "root (uid 0)"),
    (["65534"], NOBODY, FRR, "frr (uid"),
    (["root"], ROOT, FRR, "frr (uid"),
], ids=["name", "uid", "root-only"])
def test_fpm_allowed_users_configured(lab, users, ok, bad, who):
    doc = lab.config_doc(fpm={"allowed-users": users})
    d = lab.fpmd(config=lab.write_config(doc))
    refused(lab, d, bad, who)
    accepted(lab, d, ok)


def test_fpm_allowed_users_bad_value_refused(lab):
    doc = lab.config_doc(fpm={"allowed-users": ["no/such user"]})
    d = lab.fpmd(config=lab.write_config(doc), wait=False)
    rc = d.proc.wait(10)
    text = d.output() + d.logtext()
    assert rc != 0 and "allowed-users" in text, text


# ---- Unix sockets: plugin and control ------------------------------------

CONNECT = r"""
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
    print("connected")
except OSError as e:
    print(e.errno)
"""


def unix_connect(as_user, path):
    r = subprocess.run(f"{as_user} {PY} -c '{CONNECT}' {path}", shell=True,
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def sockets(lab, mode=None):
    """fpmd with its control and plugin sockets in a directory it creates
    (sock/ under the lab's directory, which others may only traverse),
    so that only each socket file's own owner, group and mode decide."""
    os.chmod(lab.tmp, 0o711)
    sockdir = os.path.join(lab.tmp, "sock")
    extra = {"mode": mode} if mode else {}
    paths = {"control": os.path.join(sockdir, "fpmd.sock"),
             "plugin": os.path.join(sockdir, "plugin.sock")}
    doc = lab.config_doc(
        control={"socket": {"path": paths["control"], **extra}},
        plugin={"socket": {"path": paths["plugin"], **extra}})
    d = lab.fpmd(config=lab.write_config(doc))
    d.sock = paths["control"]
    return d, sockdir, paths


def test_unix_sockets_refuse_unprivileged_user(lab):
    d, sockdir, paths = sockets(lab)
    st = os.stat(sockdir)
    assert st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o755, \
        oct(st.st_mode)
    frr_gid = grp.getgrnam("frr").gr_gid
    for what, path in paths.items():
        st = os.stat(path)
        assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == \
            (0o660, 0, frr_gid), (what, oct(st.st_mode), st.st_uid,
                                  st.st_gid)
        assert unix_connect(NOBODY, path) == "13", what  # EACCES
        assert unix_connect(FRR, path) == "connected", what
        assert unix_connect(ROOT, path) == "connected", what
    assert d.proc.poll() is None


def test_unix_socket_directory_writable_by_others_warns(lab):
    # Anyone could unlink and replace a socket in such a directory.
    open_dir = os.path.join(lab.tmp, "open")
    os.mkdir(open_dir)
    os.chmod(open_dir, 0o777)
    doc = lab.config_doc(
        control={"socket": {"path": os.path.join(open_dir, "fpmd.sock")}},
        plugin={"socket": {"path": os.path.join(lab.tmp, "plugin.sock")}})
    d = lab.fpmd(config=lab.write_config(doc))
    text = d.logtext()
    assert "ctl: the directory of" in text and "writable by other" in text, \
        text
    # The plugin's directory (the lab's, root's alone) is fine.
    assert "plugin: the directory of" not in text, text


def test_unix_sockets_mode_from_config(lab):
    d, _, paths = sockets(lab, mode="0600")
    for what, path in paths.items():
        st = os.stat(path)
        assert stat.S_IMODE(st.st_mode) == 0o600, (what, oct(st.st_mode))
        assert unix_connect(FRR, path) == "13", what
        assert unix_connect(NOBODY, path) == "13", what
        assert unix_connect(ROOT, path) == "connected", what


def test_fpm_refusal_flood_keeps_log_short(lab):
    # A local user connecting in a loop: every refusal is counted, the
    # log says the first ones and then how many more, and zebra's user
    # still gets in afterwards.
    d = lab.fpmd()
    log0 = len(d.logtext())
    n = 40
    loop = ("import socket\n"
            f"for _ in range({n}):\n"
            "    s = socket.create_connection(('127.0.0.1', 2620))\n"
            "    s.recv(1)\n"
            "    s.close()\n")
    lab.r1.run(f"{NOBODY} {PY} -c \"{loop}\"")
    wait_for(lambda: fpm(d)["refused"] == n, timeout=10,
             what=f"{n} refusals counted")
    lines = [x for x in d.logtext()[log0:].splitlines() if "refused" in x]
    assert 0 < len(lines) <= 11, "\n".join(lines)
    accepted(lab, d, FRR)
    assert d.proc.poll() is None
