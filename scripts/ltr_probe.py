#!/usr/bin/env python3
"""Would a learned re-ranker of recall's top 50 generalize from one BEAM set to the other?

An experiment probe (docs/EXPERIMENTS.md, tenth session), not part of the engine. Reads
each set's conversations and questions and the per-question output of
`hypermem eval --k 200 --per-question /tmp/pq-<set>.jsonl`, describes every candidate of
the engine's top 50 by a few features, fits a logistic regression on one set and re-ranks
the other set's top 50 with it (and the reverse), printing recall@10 / MRR of the engine's
order and of the re-ranked one. Needs numpy and scikit-learn.

    python3 scripts/ltr_probe.py ../shared/data [feature,feature,...]
"""
import collections, json, math, re, sys

import numpy as np
from sklearn.linear_model import LogisticRegression

TOK = re.compile(r"[a-z0-9]+")
STOP = set("a an the and or of to in on for is are was were be been i you he she it we they my your me "
           "do did does what when where who how which that this with at by from as about have has had "
           "can could would should will not no yes so if but".split())
NAMES = ["rr", "logrank", "user", "bm25", "cov", "nbprev", "nbnext", "loglen", "pos", "sesstop",
         "bigram", "qmark"]
DEPTH = 50


def toks(s):
    return [t for t in TOK.findall((s or "").lower()) if t not in STOP]


def features(data, name):
    convs = {}
    for line in open(f"{data}/{name}/conversations.jsonl"):
        c = json.loads(line)
        turns = [dict(id=t["turn_id"], role=t.get("role"), text=t["text"], sess=si)
                 for si, s in enumerate(c["sessions"]) for t in s["turns"] if t["text"].strip()]
        tk = [toks(t["text"]) for t in turns]
        df = collections.Counter()
        for x in tk:
            df.update(set(x))
        convs[c["conversation_id"]] = (turns, tk, df, sum(map(len, tk)) / len(tk),
                                       {t["id"]: i for i, t in enumerate(turns)},
                                       [collections.Counter(x) for x in tk])
    qs = {}
    for line in open(f"{data}/{name}/questions.jsonl"):
        q = json.loads(line)
        qs[q["question_id"]] = q
    rows = []
    for line in open(f"/tmp/pq-{name}.jsonl"):
        r = json.loads(line)
        q = qs[r["question_id"]]
        turns, tk, df, avg, idx, tfs = convs[q["conversation_id"]]
        n = len(turns)
        qw = toks(q["question"])
        qt = list(dict.fromkeys(qw))
        qbi = set(zip(qw, qw[1:]))
        idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in qt}
        total = sum(idf.values()) or 1
        ret = [t for t in r["returned"][:DEPTH] if t in idx]
        rank = {t: i + 1 for i, t in enumerate(r["returned"])}
        ev = set(q["evidence"])

        def bm25(i):
            tf, length = tfs[i], len(tk[i])
            return sum(idf[t] * tf[t] * 2.2 / (tf[t] + 1.2 * (0.25 + 0.75 * length / avg))
                       for t in qt if t in tf)

        bms = [bm25(idx[t]) for t in ret]
        top = max(bms, default=0) or 1
        sess_top = collections.Counter(turns[idx[t]]["sess"] for t in ret[:10])
        cands = []
        for j, t in enumerate(ret):
            i = idx[t]
            tu = turns[i]

            def near(k):
                if 0 <= k < n and turns[k]["sess"] == tu["sess"]:
                    rk = rank.get(turns[k]["id"])
                    return 1 / rk if rk else 0
                return 0

            f = [1 / (j + 1), math.log(j + 1), float(tu["role"] != "assistant"), bms[j] / top,
                 sum(idf[w] for w in qt if w in tfs[i]) / total, near(i - 1), near(i + 1),
                 math.log(1 + len(tk[i])), i / n, sess_top[tu["sess"]] / 10,
                 len(qbi & set(zip(tk[i], tk[i][1:]))) / (len(qbi) or 1), float("?" in tu["text"])]
            cands.append((t, f, int(t in ev)))
        rows.append((ev, cands))
    return rows


def score(rows, model=None, cols=None):
    r10 = mrr = 0.0
    for ev, cands in rows:
        ids = [t for t, _, _ in cands]
        if model is not None:
            s = model.decision_function(np.array([[f[c] for c in cols] for _, f, _ in cands]))
            ids = [ids[i] for i in np.argsort(-s, kind="stable")]
        r10 += len(ev & set(ids[:10])) / len(ev)
        mrr += next((1 / (i + 1) for i, t in enumerate(ids) if t in ev), 0.0)
    return r10 / len(rows), mrr / len(rows)


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else "../shared/data"
    cols = ([NAMES.index(c) for c in sys.argv[2].split(",")] if len(sys.argv) > 2
            else list(range(len(NAMES))))
    sets = {s: features(data, s) for s in ("beam100k", "beam500k")}
    for train, test in (("beam100k", "beam500k"), ("beam500k", "beam100k")):
        x = np.array([[f[c] for c in cols] for _, cands in sets[train] for _, f, _ in cands])
        y = np.array([label for _, cands in sets[train] for _, _, label in cands])
        model = LogisticRegression(C=1.0, max_iter=2000).fit(x, y)
        before, after = score(sets[test]), score(sets[test], model, cols)
        print(f"fit on {train}, tested on {test}: engine {before[0]:.3f} / {before[1]:.3f}, "
              f"re-ranked {after[0]:.3f} / {after[1]:.3f}")
        print("  weights", {NAMES[c]: round(float(w), 2) for c, w in zip(cols, model.coef_[0])})


if __name__ == "__main__":
    main()
