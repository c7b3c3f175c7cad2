#!/usr/bin/env python3
"""The code index on the deno tasks (../shared/code-index): file localisation
(any@1/5/10, all@5, MRR, as the check computes them, over all tasks and over
those without a leak), the build (time, bytes beside the source, peak RSS),
cold `code_search` latency (p50/p95 of whole processes), and a warm start.

usage: bench/code_index.py BINARY TREE TASKS.json [--skip-build] [--limit N]
"""
import json, os, subprocess, sys, tempfile, time, resource, statistics

def run(argv, env):
    t = time.monotonic()
    p = subprocess.run(argv, capture_output=True, text=True, env=env)
    return p, time.monotonic() - t

def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    binary, tree, tasks_file = args[:3]
    skip_build = "--skip-build" in sys.argv
    home = os.environ.get("AGENT_TUI_HOME") or tempfile.mkdtemp(prefix="ci-home-")
    env = dict(os.environ, AGENT_TUI_HOME=home)
    data = json.load(open(tasks_file))
    tasks = data["tasks"]
    if "--limit" in sys.argv:
        tasks = tasks[: int(sys.argv[sys.argv.index("--limit") + 1])]
    source = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(tree) for f in fs
                 if not os.path.islink(os.path.join(d, f)))
    if not skip_build:
        subprocess.run([binary, "index", "clear", "--root", tree], env=env, capture_output=True)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        p, secs = run([binary, "index", "build", "--root", tree, "--json"], env)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if p.returncode != 0:
            sys.exit(f"build failed: {p.stderr}")
        built = json.loads(p.stdout)
        on_disk = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(home) for f in fs)
        print(f"build: {secs:.1f} s wall ({built['duration_ms']/1000:.1f} s inside), "
              f"{built['indexed']} of {built['files']} files, {built['symbols']} symbols, "
              f"{built['terms']} terms; index {built['bytes_on_disk']/1e6:.1f} MB, state home "
              f"{on_disk/1e6:.1f} MB = {on_disk/source:.2f}x the source ({source/1e6:.1f} MB); "
              f"peak RSS {max(peak, before)/1024:.0f} MB")
    p, secs = run([binary, "index", "build", "--root", tree, "--json"], env)
    print(f"warm start, nothing changed (index build): {secs*1000:.0f} ms")
    times, ranked = [], []
    for t in tasks:
        query = json.dumps({"query": t["query"], "limit": 10})
        p, secs = run([binary, "tool", "code_search", query, "--root", tree], env)
        times.append(secs)
        if p.returncode != 0:
            print("failed:", t["id"], p.stdout[:300], p.stderr[:300], file=sys.stderr)
            ranked.append([])
            continue
        paths = []
        for r in json.loads(p.stdout)["results"]:
            if r["path"] not in paths:
                paths.append(r["path"])
        ranked.append(paths)
    def metrics(sel):
        n = len(sel) or 1
        out = {"any@1": 0, "any@5": 0, "any@10": 0, "all@5": 0, "MRR": 0.0}
        for t, paths in sel:
            gold = set(t["gold"])
            out["any@1"] += bool(gold & set(paths[:1]))
            out["any@5"] += bool(gold & set(paths[:5]))
            out["any@10"] += bool(gold & set(paths[:10]))
            out["all@5"] += gold <= set(paths[:5])
            out["MRR"] += next((1 / (i + 1) for i, p in enumerate(paths[:10]) if p in gold), 0)
        return {k: round(100 * v / n, 1) if k != "MRR" else round(v / n, 3) for k, v in out.items()}
    pairs = list(zip(tasks, ranked))
    print(f"all {len(pairs)} tasks:      ", metrics(pairs))
    no_leak = [x for x in pairs if not x[0]["leak"]]
    print(f"{len(no_leak)} tasks without leak:", metrics(no_leak))
    if "plain_bm25" in data:
        print("plain BM25 (the README):", data["plain_bm25"])
    times.sort()
    p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))]
    print(f"code_search, whole process: p50 {statistics.median(times)*1000:.0f} ms, "
          f"p95 {p95*1000:.0f} ms, max {times[-1]*1000:.0f} ms")
    if os.environ.get("CODE_INDEX_RANKED"):
        json.dump([{"id": t["id"], "gold": t["gold"], "ranked": r} for t, r in pairs],
                  open(os.environ["CODE_INDEX_RANKED"], "w"), indent=1)

if __name__ == "__main__":
    main()
