#!/usr/bin/env python3
"""Fit the loader's serving model (src/lib/serve.c) on a tuned database.

Every trial of a stored winner's kernel on another tuned shape (cross-timing, or the same vendor algorithm met in
another shape's search) is a measured pair: the kernel's ratio to cuBLAS where it was tuned, and where it ran.
The model predicts   ratio_there * Q(here) / Q(there) * exp(-decay * d)   (Q: busy share of the GPU, d: log2
distance). This prints the least-squares decay, and for a few decays the largest prediction among pairs that lost
to cuBLAS (under 0.98x): the margin a reuse needs must stay above it.
Usage: python3 tests/perf/fit_serve.py DB [DECAY]   (DECAY: also list the pairs ranked by prediction)
"""
import sqlite3, math, sys, re
db = sqlite3.connect(sys.argv[1])
SM = int(sys.argv[3]) if len(sys.argv) > 3 else 132
# baseline: min(stored, API=0 full-size ok trial)
base = {}
for m,n,k,ms in db.execute("select m,n,k,cublas_ms from v_baselines"):
    base[(m,n,k)] = ms
for m,n,k,ms in db.execute("select m,n,k,min(median_ms) from v_trials where family='cublas' and params like 'API=0%' and status='ok' group by m,n,k"):
    base[(m,n,k)] = min(base[(m,n,k)], ms)
win = {}
for m,n,k,fam,par,ms in db.execute("select m,n,k,family,params,median_ms from v_winners"):
    win[(m,n,k)] = (fam, par, base[(m,n,k)]/ms)
def P(par): return dict(kv.split('=') for kv in par.split(','))
def Q(fam, par, s):
    if fam == 'cublas': return 1.0
    p = {a:int(b) for a,b in P(par).items()}
    m,n,k = s
    bm, bn = p.get('BM',0), p.get('BN',0)
    sk = p.get('SPLITK',1)
    tiles = math.ceil(m/bm)*math.ceil(n/bn)*sk
    q = tiles/(math.ceil(tiles/SM)*SM)
    q *= m/(math.ceil(m/bm)*bm) * n/(math.ceil(n/bn)*bn)
    return q
def dist(a,b): return sum(abs(math.log2(x/y)) for x,y in zip(a,b))
pairs = []
for there,(fam,par,r) in win.items():
    for m,n,k,ms in db.execute("select m,n,k,min(median_ms) from v_trials where family=? and params=? and status='ok' group by m,n,k", (fam,par)):
        here=(m,n,k)
        if here == there: continue
        actual = base[here]/ms
        pairs.append((here, there, fam, r, actual, Q(fam,par,here)/Q(fam,par,there), dist(here,there)))
print(len(pairs), "pairs")
def predict(p, decay): return p[3]*p[5]*math.exp(-decay*p[6])
best=None
for decay in [x/100 for x in range(0,201,5)]:
    err=sum((math.log(predict(p,decay))-math.log(p[4]))**2 for p in pairs)
    if best is None or err<best[0]: best=(err,decay)
print("least squares decay", best)
for decay in [0.1,0.25,0.5,1.0]:
    # smallest margin such that all pairs predicted >= 1+margin have actual >= 0.98
    ms=[ (predict(p,decay), p[4], p) for p in pairs]
    bad=[x for x in ms if x[1] < 0.98]
    need = max([x[0] for x in bad], default=0)
    served=[x for x in ms if x[0] > need]
    print(f"decay {decay}: worst-case predicted among losers {need:.3f}; pairs served above it: {len(served)}, their geomean actual {math.exp(sum(math.log(x[1]) for x in served)/max(1,len(served))):.3f}")
    for dmax in [0.5,1,2]:
        bad=[x for x in ms if x[1] < 0.98 and x[2][6]<=dmax]
        need = max([x[0] for x in bad], default=0)
        served=[x for x in ms if x[0] > need and x[2][6]<=dmax]
        print(f"   dmax {dmax}: threshold {need:.3f}, served {len(served)} pairs, min actual {min([x[1] for x in served], default=0):.3f}")
if len(sys.argv)>2:
    for p in sorted(pairs, key=lambda p:-predict(p,float(sys.argv[2])))[:40]:
        print(p[0],p[1],p[2],round(p[3],3),'actual',round(p[4],3),'pred',round(predict(p,float(sys.argv[2])),3),'d',round(p[6],2))
