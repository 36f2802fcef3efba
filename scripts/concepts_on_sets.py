#!/usr/bin/env python3
"""Concepts on a development set's sessions (issue 34): imports DATA with --episodes into
two fresh data directories, pulses every conversation until its episodes are
consolidated, and prints per conversation the concepts' count and sizes, labels, and
the adjusted Rand index between the two runs (stability).

Usage: cargo build --release; python3 scripts/concepts_on_sets.py ../shared/data/locomo
"""
import json, subprocess, sys, tempfile, os
import pathlib
B=str(pathlib.Path(__file__).resolve().parent.parent / 'target/release/hypermem')
def run(args):
    r=subprocess.run([B]+args, capture_output=True, text=True)
    try: return json.loads(r.stdout)
    except Exception: print(r.stdout[:300], r.stderr[:300]); raise
def concepts_of(data):
    d=tempfile.mkdtemp()
    run(['--data-dir',d,'--create','--json','import','--data',data,'--episodes'])
    out={}
    for s in run(['--data-dir',d,'--json','stats']):
        p=s['project']
        for _ in range(60):
            rc=run(['--data-dir',d,'--json','pulse','--project',p])
            left=[ph for ph in rc['phases'] if ph['phase']=='semantic_refresh'][0]['produced']
            if ' 0 episodes left to consolidate' in left: break
        out[p]=run(['--data-dir',d,'--json','concepts','list','--project',p])
    return out
def ari(a,b):
    from collections import Counter
    n=len(a); c2=lambda x:x*(x-1)/2
    t=Counter(zip(a,b)); ra=Counter(a); rb=Counter(b)
    idx=sum(c2(v) for v in t.values()); sa=sum(c2(v) for v in ra.values()); sb=sum(c2(v) for v in rb.values())
    exp=sa*sb/c2(n) if n>1 else 0; mx=(sa+sb)/2
    return 1.0 if mx==exp else (idx-exp)/(mx-exp)
data=sys.argv[1]; limit=int(sys.argv[2]) if len(sys.argv)>2 else 99
r1=concepts_of(data); r2=concepts_of(data)
aris=[]; sizes=[]; labels=[]
for p in sorted(r1)[:limit]:
    def part(cs):
        m={}
        for i,c in enumerate(cs):
            for e in c['support']: m[e]=i
        return m
    a,b=part(r1[p]),part(r2[p])
    eps=sorted(set(a)|set(b))
    la=[a.get(e,-1-e) for e in eps]; lb=[b.get(e,-1-e) for e in eps]
    if len(eps)>1: aris.append(ari(la,lb))
    sizes.append((p,len(r1[p]),sorted([len(c['support']) for c in r1[p]],reverse=True)[:8]))
    labels+= [c['label'] for c in r1[p]][:4]
print('projects',len(r1),'stability ARI mean',sum(aris)/max(1,len(aris)),'min',min(aris) if aris else None)
for s in sizes[:6]: print(' ',s)
print(' labels:',labels[:16])
