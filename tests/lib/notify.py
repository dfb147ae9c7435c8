# SPDX-License-Identifier: GPL-2.0-or-later
"""A service manager's notify socket for fpmd's sd_notify(3) messages."""
import os
import socket
import time


class Notify:
    """The service manager's end of sd_notify(3)."""

    def __init__(self, tmp):
        self.path = os.path.join(tmp, "notify.sock")
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind(self.path)
        self.msgs = []  # every datagram so far, as {FIELD: value}

    def env(self):
        return {"NOTIFY_SOCKET": self.path}

    def until(self, pred, timeout=20, what="a notification"):
        """Read datagrams until one satisfies pred; returns it."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.s.settimeout(max(deadline - time.time(), 0.01))
            try:
                data = self.s.recv(65536)
            except socket.timeout:
                break
            msg = dict(line.split("=", 1)
                       for line in data.decode().split("\n") if "=" in line)
            self.msgs.append(msg)
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
