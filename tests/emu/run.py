# CPU emulation check of a family's template (no GPU): compiles templates/<family>.cu as C++ against emu.h with
# ASan + alignment UBSan, runs candidates on odd shapes, all four layouts, padded/misaligned operands, beta 0 (NaN C)
# and 0.5 against a double reference. Slow (minutes per candidate). Usage, after `make`:
#   gcc -Ikernels -o build/emu_geom tests/emu/geom.c build/libgemmtune.a && python3 tests/emu/run.py vec4 2 [PARAMS...]
import subprocess, sys, random, os, itertools, tempfile
fam = sys.argv[1]; nsample = int(sys.argv[2]); extra = sys.argv[3:]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
here = os.path.join(root, 'tests', 'emu')
tmp = tempfile.mkdtemp()
cands = [l.split()[1] for l in subprocess.run([root+'/build/gemmtune','candidates','--family',fam],capture_output=True,text=True).stdout.splitlines()]
random.seed(fam)
pick = extra if extra else ([cands[0], cands[-1]] + random.sample(cands, min(nsample, len(cands))))
shapes = [(1,1,1),(7,13,5),(127,129,131),(33,70,9)] + ([(300,260,20)] if fam in ("warptile","vec4") else [])
fails = 0
for params in pick:
  for ta, tb in itertools.product([0,1],[0,1]):
    defs = ['-D'+kv for kv in params.split(',')]
    exe = f'{tmp}/bin_{fam}_{ta}{tb}'
    r = subprocess.run(['g++','-std=c++20','-O1','-g','-fsanitize=address,alignment','-fno-sanitize-recover=all','-w','-I',root+'/templates','-I',here,
        f'-DTEMPLATE="{fam}.cu"', f'-DGT_TA={ta}', f'-DGT_TB={tb}', *defs, here+'/main.cpp','-o',exe,'-pthread'],capture_output=True,text=True)
    if r.returncode: print('COMPILE FAIL', params, r.stderr[:2000]); fails += 1; continue
    lines = []
    for (M,N,K) in shapes:
      for pad, mis, beta in [(0,0,0),(3,1,1),(4,0,1),(1,0,0),('r',0,1),('r4',0,0),('r',2,0)]:
        g = subprocess.run([root+'/build/emu_geom',fam,params,str(M),str(N),str(K)],capture_output=True,text=True)
        if g.returncode: print('GEOM FAIL', params, g.stderr); fails += 1; continue
        def ld(x):
          if pad == 'r': return (x + 3) // 4 * 4
          if pad == 'r4': return (x + 3) // 4 * 4 + 4
          return x + pad
        lda = ld(M if ta else K); ldb = ld(K if tb else N); ldc = ld(N)
        lines.append(' '.join(g.stdout.split() + [str(x) for x in (M,N,K,lda,ldb,ldc,mis,mis,mis,beta)]))
    o = subprocess.run([exe],input='\n'.join(lines)+'\n',capture_output=True,text=True, env=dict(os.environ, ASAN_OPTIONS='detect_leaks=0'))
    if o.returncode:
      fails += 1; print('FAIL', fam, params, ta, tb, o.stdout[:1500], o.stderr[:1500])
  print('done', params, flush=True)
print(fam, 'fails', fails)
