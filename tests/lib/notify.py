# SPDX-License-Identifier: GPL-2.0-or-later
"""A service manager's notify socket for fpmd's sd_notify(3) messages."""
import os
import socket
import struct
import time


SO_TIMESTAMPNS = 35   # asm-generic/socket.h (SCM_TIMESTAMPNS too)
SCM_CREDENTIALS = 2


class Notify:
    """The service manager's end of sd_notify(3)."""

    def __init__(self, tmp):
        self.path = os.path.join(tmp, "notify.sock")
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind(self.path)
        # The sender's pid (systemd's NotifyAccess=main checks it) and the
        # kernel's receive time, free of this process's scheduling.
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.msgs = []  # every datagram so far, as {FIELD: value}
        self.meta = []  # for each of msgs: (sender pid, receive time in s)

    def env(self):
        return {"NOTIFY_SOCKET": self.path}

    def until(self, pred, timeout=20, what="a notification"):
        """Read datagrams until one satisfies pred; returns it."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.s.settimeout(max(deadline - time.time(), 0.01))
            try:
                data, anc, _, _ = self.s.recvmsg(65536, 256)
            except socket.timeout:
                break
            msg = dict(line.split("=", 1)
                       for line in data.decode().split("\n") if "=" in line)
            pid, t = None, None
            for level, typ, val in anc:
                if level == socket.SOL_SOCKET and typ == SCM_CREDENTIALS:
                    pid = struct.unpack("=iII", val[:12])[0]
                elif level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                    sec, nsec = struct.unpack("=qq", val[:16])
                    t = sec + nsec / 1e9
            self.msgs.append(msg)
            self.meta.append((pid, t))
            if pred(msg):
                return msg
        raise AssertionError(f"no {what} within {timeout} s; got "
                             f"{self.msgs}")

    def ready(self, timeout=20):
        return self.until(lambda m: m.get("READY") == "1", timeout, "READY=1")

    def statuses(self):
        return [m["STATUS"] for m in self.msgs if "STATUS" in m]

    def close(self):
        self.s.close()
