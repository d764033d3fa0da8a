#!/usr/bin/env python3
"""Find memory instructions whose cache-policy descriptor (desc[URn]) is a uniform register that no instruction of
the same kernel writes: what NVRTC 13.0 emitted for some of skinny's evict-first copies while its pipeline's
prologue issued them from a site of their own ("illegal instruction" on the GPU; templates/skinny.cu, sk_step).
Input: nvdisasm -c output, offsets in /*...*/ kept or stripped (as tests/perf/sass_diff.sh keeps them), one or
more files.
Usage: nvdisasm -c K.cubin > K.sass && python3 tests/perf/undef_desc.py K.sass   (exit 1 when any is found)"""
import re
import sys


def written_uniform(fn):
    """Uniform registers some instruction of fn writes (its first operand; a .64 or WIDE result writes a pair)."""
    out = set()
    for line in fn.splitlines():
        m = re.match(r'\s*(?:/\*[0-9a-f]+\*/)?\s*(?:@!?U?P\w+\s+)?([A-Z0-9_.]+)\s+UR(\d+)\b', line)
        if m:
            r = int(m.group(2))
            out.add(r)
            if '.64' in m.group(1) or 'WIDE' in m.group(1):
                out.add(r + 1)
    return out


def main(paths):
    bad = 0
    for path in paths:
        for fn in re.split(r'\n\s*\.text\.', open(path).read())[1:]:
            name = fn.split(':', 1)[0].split()[0]
            used = {int(x) for x in re.findall(r'desc\[UR(\d+)\]', fn)}
            never = sorted(used - written_uniform(fn))
            if never:
                bad += 1
                print(f"{path}: {name} reads descriptors from {', '.join('UR%d' % u for u in never)}, never written")
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
