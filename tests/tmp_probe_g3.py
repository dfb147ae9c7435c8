import time
from test_frr import *  # noqa
from test_frr import lab  # noqa: F401  fixture

def test_probe(lab):
    h2_loopback(lab, H2_DST + "/24")
    d = lab.fpmd(extra=SETTLE)
    lab.warm_kernel_neighbors()
    oif = lab.r1.ifindex("r1-eth1")
    ok = fpm_frame(route_msg(VALID_PREFIX, lab.H2_V4, oif) +
                   route_msg("172.16.101.0/24", None, lab.r1.ifindex("r1-eth0")))
    data = ROUTE_KEY_OVERFLOW + long_dst_frame(4000) + ok
    assert FpmClient(lab).run(data) == "still-open"
    t0 = time.time()
    wait_route(d, VALID_PREFIX)
    t1 = time.time()
    r = fpm_routes(d)
    got, dl = measure(lab, d, lambda: ping(lab.h1, H2_DST, 5, 0.02))
    t2 = time.time()
    print(f"TIMING wait_route {t1-t0:.2f} rest {t2-t1:.2f}")
    time.sleep(1.5)
    print("AFTER", sorted(fpm_routes(d)))
    print([l for l in d.logtext().splitlines() if "kernel dropped" in l])
