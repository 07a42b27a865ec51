#!/usr/bin/env python3
"""Turns a JMH JSON result file (java -jar benchmarks.jar ... -rf json -rff FILE) into the Markdown
tables of BENCHMARKS.md.

Every time cell reads "CPU (wall)": the median over all measurement iterations of all forks of the
CPU time per operation (cpu.time.norm, from -prof dev.fairway.benchmarks.CpuTimeProfiler), and in
parentheses the median wall-clock time per operation (JMH's score). On a shared machine the
wall-clock time grows whenever another process holds the CPU; CPU time does not. Without the CPU
profiler a cell reads "median (fastest)" of the wall-clock time.
Usage: python3 benchmarks/report.py results.json > tables.md
"""
import json
import statistics
import sys

PEER_PAIRS = [
    ("ribbon-round-robin", "fairway-round-robin"),
    ("spring-round-robin", "fairway-round-robin"),
    ("armeria-round-robin", "fairway-round-robin"),
    ("dubbo-round-robin", "fairway-weighted-round-robin"),
    ("armeria-weighted-round-robin", "fairway-weighted-round-robin"),
    ("spring-random", "fairway-random"),
    ("dubbo-least-active", "fairway-least-connections"),
    ("dubbo-consistent-hash", "fairway-consistent-hash"),
    ("ribbon-weighted-response-time", "fairway-least-response-time"),
]
STRATEGIES = ["round-robin", "weighted-round-robin", "random", "least-connections", "power-of-two-choices",
              "key-affinity", "consistent-hash", "least-response-time", "concurrency-limited", "least-queueing"]


def load(path):
    with open(path) as f:
        return json.load(f)


def samples(metric):
    return [v for fork in metric.get("rawData", []) for v in fork]


def stat(metric):
    xs = samples(metric)
    if not xs:
        return metric["score"], metric["score"]
    return statistics.median(xs), min(xs)


def fmt(x):
    if x is None:
        return "–"
    if x >= 1000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def cell(metric):
    if metric is None:
        return "–"
    med, lo = stat(metric)
    return f"{fmt(med)} ({fmt(lo)})"


def cpu(result):
    if result is None:
        return None
    return result["secondaryMetrics"].get("cpu.time.norm")


def tcell(result, scale=1.0):
    """CPU median (wall median), or wall median (fastest) without CPU data."""
    if result is None:
        return "–"
    wall_med, wall_lo = stat(result["primaryMetric"])
    c = cpu(result)
    if c is None:
        return f"{fmt(wall_med / scale)} ({fmt(wall_lo / scale)})"
    return f"{fmt(stat(c)[0] / scale)} ({fmt(wall_med / scale)})"


def tvalue(result):
    c = cpu(result)
    return stat(c)[0] if c is not None else stat(result["primaryMetric"])[0]


def alloc(result):
    if result is None:
        return None
    m = result["secondaryMetrics"].get("gc.alloc.rate.norm") or result["secondaryMetrics"].get("·gc.alloc.rate.norm")
    return None if m is None else m["score"]


def fmt_bytes(b):
    return "–" if b is None else f"{b:.0f}"


def index(results):
    out = {}
    for r in results:
        name = r["benchmark"].split(".")
        key = (name[-2], name[-1], tuple(sorted(r.get("params", {}).items())))
        out[key] = r
    return out


def find(ix, cls, method, **params):
    return ix.get((cls, method, tuple(sorted((k, str(v)) for k, v in params.items()))))


def params_of(results, cls, name):
    vals = []
    for r in results:
        if r["benchmark"].split(".")[-2] == cls and name in r.get("params", {}):
            v = r["params"][name]
            if v not in vals:
                vals.append(v)
    return vals


def pick_table(ix, results, method, title):
    sizes = params_of(results, "PickBenchmark", "targets")
    if not sizes:
        return
    print(f"\n### {title}\n")
    print("| strategy | " + " | ".join(f"{s} targets ns/op" for s in sizes) + " | "
          + " | ".join(f"{s} B/op" for s in sizes) + " |")
    print("|---|" + "---:|" * (2 * len(sizes)))
    for st in STRATEGIES:
        rs = [find(ix, "PickBenchmark", method, strategy=st, targets=s) for s in sizes]
        if all(r is None for r in rs):
            continue
        print(f"| {st} | " + " | ".join(tcell(r) for r in rs) + " | "
              + " | ".join(fmt_bytes(alloc(r)) for r in rs) + " |")


def main():
    results = load(sys.argv[1])
    ix = index(results)

    base = find(ix, "BaselineBenchmark", "nanoTime")
    if base:
        print(f"\n`System.nanoTime()` on this machine: {tcell(base)} ns/op.\n")

    pick_table(ix, results, "pick", "Pick alone (pick + release), 1 thread")
    pick_table(ix, results, "pick_2t", "Pick alone (pick + release), 2 threads, one shared balancer")
    pick_table(ix, results, "pickSuccess", "Pick + success (the whole hold), 1 thread")
    pick_table(ix, results, "pickSuccess_2t", "Pick + success (the whole hold), 2 threads")

    rows = [r for r in results if r["benchmark"].split(".")[-2] == "PassiveHealthBenchmark"]
    if rows:
        print("\n### Passive health on success(): defaults vs disabled (pick + success)\n")
        print("| strategy | targets | threads | disabled ns/op | defaults ns/op | disabled B/op | defaults B/op |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for st in params_of(results, "PassiveHealthBenchmark", "strategy"):
            for n in params_of(results, "PassiveHealthBenchmark", "targets"):
                for method, threads in (("pickSuccess", 1), ("pickSuccess_2t", 2)):
                    d = find(ix, "PassiveHealthBenchmark", method, strategy=st, targets=n, passiveHealth="disabled")
                    e = find(ix, "PassiveHealthBenchmark", method, strategy=st, targets=n, passiveHealth="defaults")
                    if d or e:
                        print(f"| {st} | {n} | {threads} | {tcell(d)} | "
                              f"{tcell(e)} | {fmt_bytes(alloc(d))} | {fmt_bytes(alloc(e))} |")

    sizes = params_of(results, "PeerBenchmark", "targets")
    if sizes:
        print("\n### Peers, same run, 1 thread (ratio = peer / Fairway; above 1 means Fairway is faster)\n")
        print("| peer | Fairway equivalent | targets | peer ns/op | Fairway ns/op | ratio peer/Fairway, CPU (wall) | peer B/op | Fairway B/op |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for peer, fw in PEER_PAIRS:
            for n in sizes:
                p = find(ix, "PeerBenchmark", "pick", balancer=peer, targets=n)
                f = find(ix, "PeerBenchmark", "pick", balancer=fw, targets=n)
                if not p or not f:
                    continue
                ratio = tvalue(p) / tvalue(f)
                wall_ratio = stat(p["primaryMetric"])[0] / stat(f["primaryMetric"])[0]
                print(f"| {peer} | {fw} | {n} | {tcell(p)} | {tcell(f)} | "
                      f"{ratio:.2f}× ({wall_ratio:.2f}×) | {fmt_bytes(alloc(p))} | {fmt_bytes(alloc(f))} |")

    rows = [r for r in results if r["benchmark"].split(".")[-2] == "ChurnBenchmark"]
    if rows:
        print("\n### Churn: picks while another thread replaces the list\n")
        print("| strategy | targets | pick, nobody writing ns/op | pick under churn ns/op | one replacement under load µs |")
        print("|---|---:|---:|---:|---:|")
        for st in params_of(results, "ChurnBenchmark", "strategy"):
            for n in params_of(results, "ChurnBenchmark", "targets"):
                q = find(ix, "ChurnBenchmark", "quiet", strategy=st, targets=n)
                c = find(ix, "ChurnBenchmark", "churn", strategy=st, targets=n)
                if not c:
                    continue
                pick = c["secondaryMetrics"].get("pick")
                rep = c["secondaryMetrics"].get("replace")
                rep_us = None
                if rep:
                    med, lo = stat(rep)
                    rep_us = f"{fmt(med / 1000)} ({fmt(lo / 1000)})"
                print(f"| {st} | {n} | {tcell(q)} | {cell(pick)} | {rep_us or '–'} |")

    rows = [r for r in results if r["benchmark"].split(".")[-2] == "RebuildBenchmark"]
    if rows:
        sizes = params_of(results, "RebuildBenchmark", "targets")
        print("\n### Snapshot rebuild: one MutableTargetSource.set (one target replaced), ms/op\n")
        print("| strategy | " + " | ".join(f"{s} targets ms" for s in sizes) + " | "
              + " | ".join(f"{s} KB/op" for s in sizes) + " |")
        print("|---|" + "---:|" * (2 * len(sizes)))
        for st in params_of(results, "RebuildBenchmark", "strategy"):
            rs = [find(ix, "RebuildBenchmark", "set", strategy=st, targets=s) for s in sizes]
            cells = []
            for r in rs:
                if r is None:
                    cells.append("–")
                    continue
                cells.append(tcell(r, 1000.0))  # µs -> ms
            print(f"| {st} | " + " | ".join(cells) + " | "
                  + " | ".join("–" if alloc(r) is None else f"{alloc(r) / 1024:,.0f}" for r in rs) + " |")

    rows = [r for r in results if r["benchmark"].split(".")[-2] == "InterceptorBenchmark"]
    if rows:
        print("\n### Interceptor overhead (µs/op, B/op)\n")
        print("| path | plain OkHttp | with LoadBalancingInterceptor | difference (CPU, or wall median) | plain B/op | balanced B/op | difference B/op |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for label, p, b in (("loopback GET", "plainGet", "balancedGet"),
                            ("no network (canned response)", "plainNoNetwork", "balancedNoNetwork")):
            rp = find(ix, "InterceptorBenchmark", p)
            rb = find(ix, "InterceptorBenchmark", b)
            if not rp or not rb:
                continue
            diff = tvalue(rb) - tvalue(rp)
            print(f"| {label} | {tcell(rp)} | {tcell(rb)} | {diff:+.2f} | "
                  f"{fmt_bytes(alloc(rp))} | {fmt_bytes(alloc(rb))} | {alloc(rb) - alloc(rp):+.0f} |")


if __name__ == "__main__":
    main()
