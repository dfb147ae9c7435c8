# SPDX-License-Identifier: GPL-2.0-or-later
"""The receiving loop of the UDP tools (lib/udpflow.py, lib/seqflow.py),
which run as scripts in a namespace: read until SIGINT or SIGTERM, then
drain, so that nothing queued or still in flight when the stop comes is
lost."""
import signal
import socket
import sys
import time


def receive(sock, read, handle, quiet, drain_max):
    """Hands read(sock) of every packet to handle until SIGINT or SIGTERM,
    then goes on until sock has been quiet for quiet s (a loaded machine
    may leave many packets queued, or late, when the stop comes), at most
    drain_max s after the signal (a sender still going). Prints "ready"
    on stderr once the signals are caught (the caller has bound sock)."""
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(1))
    sock.settimeout(0.1)
    print("ready", file=sys.stderr, flush=True)
    quiet_since = stopped = None
    while True:
        if stop and stopped is None:
            quiet_since = stopped = time.monotonic()
        if stopped is not None and time.monotonic() - stopped > drain_max:
            return
        try:
            item = read(sock)
        except (socket.timeout, InterruptedError):
            if quiet_since is not None and \
                    time.monotonic() - quiet_since >= quiet:
                return
            continue
        if quiet_since is not None:
            quiet_since = time.monotonic()
        handle(item)
