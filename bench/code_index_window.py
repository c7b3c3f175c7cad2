#!/usr/bin/env python3
"""Mine a window of deno's history into localisation tasks, the way
../shared/code-index/README.md describes the dev set, and score the
harness's plain BM25 on the tree at the window's base. Run on the dev window
it reproduces dev_tasks.json (a check of the miner); run on the window after
it, it gives a held-out set to measure code_search on what it was not tuned on.

usage: bench/code_index_window.py MIRROR BASE HEAD OUT.json [TREE]
  TREE (optional): the tree at BASE, written if absent, for the plain BM25.
"""
import collections, json, math, os, re, subprocess, sys

SOURCE = (".rs", ".ts", ".js", ".mjs", ".cjs", ".tsx", ".jsx", ".mts", ".cts", ".py",
          ".go", ".c", ".cc", ".cpp", ".h", ".hpp", ".java")
TEST_DIRS = {"tests", "test", "testdata", "__tests__", "testing", "bench", "benches",
             "fixtures", "__snapshots__"}
TYPE = re.compile(r"^(fix|feat|perf|refactor)(\([^)]*\))?!?:\s*", re.I)


def git(mirror, *args):
    return subprocess.run(["git", "--git-dir", mirror, *args], capture_output=True,
                          check=True).stdout.decode("utf-8", "replace")


def is_test(path):
    parts = path.split("/")
    if any(p in TEST_DIRS for p in parts[:-1]):
        return True
    return any(w in ("test", "spec", "bench") for w in re.split(r"[^a-z0-9]+", parts[-1].lower()))


def mine(mirror, base, head):
    shas = git(mirror, "rev-list", "--first-parent", "--reverse", f"{base}..{head}").split()
    at_base = set(git(mirror, "ls-tree", "-r", "--name-only", base).splitlines())
    dropped, tasks = collections.Counter(), []
    for sha in shas:
        subject = git(mirror, "log", "-1", "--format=%s", sha).strip()
        if not TYPE.match(subject):
            dropped["type"] += 1
            continue
        if re.search(r"\b(sync|bump)\b", subject, re.I):
            dropped["sync/bump"] += 1
            continue
        changes = [line.split("\t") for line in
                   git(mirror, "diff", "--name-status", "--no-renames", f"{sha}^1", sha).splitlines()]
        source = [(s, p) for s, p in changes if p.endswith(SOURCE) and not is_test(p)]
        if not source:
            dropped["no source"] += 1
        elif len(source) > 3:
            dropped["> 3 files"] += 1
        elif any(s != "M" for s, _ in source):
            dropped["not a modification"] += 1
        elif any(p not in at_base for _, p in source):
            dropped["absent at base"] += 1
        else:
            query = TYPE.sub("", subject)
            query = re.sub(r"\s*\(#\d+\)\s*$", "", query).strip()
            gold = sorted(p for _, p in source)
            leak = any(names_stem(query, p) for p in gold)
            tasks.append({"id": "deno-" + sha[:10], "sha": sha, "query": query, "gold": gold, "leak": leak})
    return shas, tasks, dict(dropped)


def names_stem(query, path):
    """The query names every part (3+ letters) of the file's stem: `TLSWrap` for
    tls_wrap.rs, `streams` for 06_streams.js (the dev set's rule, reproduced)."""
    words = set(tokens(query))
    stem = [w for w in parts(os.path.basename(path).split(".")[0]) if len(w) >= 3 and not w.isdigit()]
    return bool(stem) and all(w in words for w in stem)


def write_tree(mirror, base, out):
    ls = subprocess.run(["git", "--git-dir", mirror, "ls-tree", "-r", "-z", base],
                        capture_output=True, check=True).stdout
    cat = subprocess.Popen(["git", "--git-dir", mirror, "cat-file", "--batch"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for rec in filter(None, ls.split(b"\0")):
        meta, path = rec.split(b"\t", 1)
        mode, kind, oid = meta.split()
        if kind != b"blob":
            continue
        cat.stdin.write(oid + b"\n"); cat.stdin.flush()
        head = cat.stdout.readline().split()
        if head[1] == b"missing":
            continue
        data = cat.stdout.read(int(head[2])); cat.stdout.read(1)
        p = os.path.join(out, path.decode())
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if mode == b"120000":
            os.symlink(data.decode(), p)
        else:
            open(p, "wb").write(data)


def parts(word):
    return [p.lower() for chunk in word.split("_") for p in
            re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+", chunk)]


def tokens(text):
    """The harness's tokens: identifier parts, and the whole word joined."""
    out = []
    for word in re.findall(r"[A-Za-z0-9_]+", text):
        split = parts(word)
        out += split
        if len(split) > 1:
            out.append("".join(split))
    return [t for t in out if len(t) >= 2]


def plain_bm25(tree, tasks):
    docs = []
    for d, _, fs in os.walk(tree):
        for f in fs:
            p = os.path.join(d, f)
            if os.path.islink(p) or os.path.getsize(p) >= 1 << 20:
                continue
            data = open(p, "rb").read()
            if b"\0" in data[:8192]:
                continue
            rel = os.path.relpath(p, tree)
            docs.append((rel, tokens(data.decode("utf-8", "replace")) + tokens(rel) * 3))
    n, post, length = len(docs), collections.defaultdict(list), []
    for i, (_, toks) in enumerate(docs):
        length.append(len(toks))
        for w, c in collections.Counter(toks).items():
            post[w].append((i, c))
    avg = sum(length) / n
    ranked = []
    for t in tasks:
        score = collections.defaultdict(float)
        for w in set(tokens(t["query"])):
            df = len(post.get(w, ()))
            if not df:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for i, c in post[w]:
                score[i] += idf * c * 2.2 / (c + 1.2 * (0.25 + 0.75 * length[i] / avg))
        ranked.append([docs[i][0] for i, _ in sorted(score.items(), key=lambda x: (-x[1], docs[x[0]][0]))][:10])
    m = {"any1": 0, "any5": 0, "any10": 0, "all5": 0, "mrr": 0.0}
    for t, r in zip(tasks, ranked):
        g = set(t["gold"])
        m["any1"] += bool(g & set(r[:1])); m["any5"] += bool(g & set(r[:5]))
        m["any10"] += bool(g & set(r[:10])); m["all5"] += g <= set(r[:5])
        m["mrr"] += next((1 / (i + 1) for i, p in enumerate(r) if p in g), 0)
    k = len(tasks) or 1
    out = {key: round(100 * v / k, 3) for key, v in m.items() if key != "mrr"}
    out.update(mrr=round(m["mrr"] / k, 3), n=len(tasks), documents=n)
    return out


def main():
    mirror, base, head, out = sys.argv[1:5]
    shas, tasks, dropped = mine(mirror, base, head)
    data = {"repo": "denoland/deno", "base": base, "head": head,
            "window": f"first-parent commits {base[:12]}..{head[:12]} ({len(shas)})",
            "pool": len(tasks), "dropped": dropped, "tasks": tasks}
    if len(sys.argv) > 5:
        tree = sys.argv[5]
        if not os.path.isdir(tree):
            write_tree(mirror, base, tree)
        data["plain_bm25"] = plain_bm25(tree, tasks)
    json.dump(data, open(out, "w"), indent=1)
    print(json.dumps({k: v for k, v in data.items() if k != "tasks"}))


if __name__ == "__main__":
    main()
