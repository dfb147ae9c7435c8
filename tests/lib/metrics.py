# SPDX-License-Identifier: GPL-2.0-or-later
"""fpmd's metrics endpoint from a test: HTTP from inside a namespace (curl),
the Prometheus text format parsed into samples, and promtool's check.
"""
import re
import subprocess

PORT = 9343


def http(ns, path="/metrics", method="GET", port=PORT, addr="127.0.0.1"):
    """(status, headers {lower name: value}, body) from inside ns; status
    0 when nothing answers."""
    host = f"[{addr}]" if ":" in addr else addr
    r = ns.run(f"curl -s -i -m 5 -X {method} http://{host}:{port}{path}",
               check=False)
    if r.returncode != 0:
        return 0, {}, ""
    head, _, body = r.stdout.replace("\r\n", "\n").partition("\n\n")
    lines = head.split("\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return status, headers, body


def scrape(ns, port=PORT):
    status, headers, body = http(ns, port=port)
    assert status == 200, (status, body)
    return body


def listening(ns, port):
    out = ns.run(f"ss -Hltn 'sport = :{port}'").stdout
    return bool(out.strip())


SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """{family: {frozenset(labels): value}}, and the TYPE of each."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, typ = line.split(" ", 3)
            types[name] = typ
            samples.setdefault(name, {})
            continue
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = frozenset(LABEL.findall(m.group(2) or ""))
        fam = samples.setdefault(m.group(1), {})
        assert labels not in fam, f"duplicate sample: {line!r}"
        fam[labels] = float(m.group(3))
    return samples, types


def val(samples, family, /, **labels):
    return samples[family][frozenset(labels.items())]


def vsum(samples, family, /, **labels):
    """The sum of family's samples that carry these labels (and others)."""
    want = set(labels.items())
    return sum(n for ls, n in samples[family].items() if want <= set(ls))


def promtool(text):
    r = subprocess.run(["promtool", "check", "metrics"], input=text,
                       capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout + r.stderr
