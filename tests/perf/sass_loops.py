#!/usr/bin/env python3
"""The loops of two disassemblies of one kernel (nvdisasm -c, as tests/perf/sass_diff.sh writes them), compared:
for where the SASS of two trees differs, whether the difference reaches a kernel's main loop.
Usage: sass_loops.py BASE.sass HEAD.sass; prints one line: each side's loops of 64 or more instructions (largest
first) paired in order of size, "same" when the pair is the same text to the letter (labels aside), else the
instruction counts and the opcodes whose counts differ."""
import collections
import re
import sys


def loops(path, least=64):
    lines = [l.strip() for l in open(path) if l.strip()]
    label_at, found = {}, []
    for n, l in enumerate(lines):
        m = re.match(r"^(\.L_x_\d+):$", l)
        if m:
            label_at[m.group(1)] = n
        m = re.search(r"\bBRA\b.*`\((\.L_x_\d+)\)", l)
        if m and m.group(1) in label_at:  # a branch back: a loop from its target to here
            body = [re.sub(r"\.L_x_\d+", "L", x) for x in lines[label_at[m.group(1)] + 1:n + 1] if x.endswith(";")]
            if len(body) >= least:
                found.append(body)
    return sorted(found, key=len, reverse=True)


def mix(body):
    return collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", x).split()[0].split(".")[0] for x in body)


def main():
    base, head = loops(sys.argv[1]), loops(sys.argv[2])
    if len(base) != len(head):
        print("loops: %d -> %d of 64+ instructions" % (len(base), len(head)))
        return
    out = []
    for b, h in zip(base, head):
        if b == h:
            out.append("same (%d)" % len(b))
            continue
        mb, mh = mix(b), mix(h)
        moved = " ".join("%s %d->%d" % (k, mb[k], mh[k]) for k in sorted(set(mb) | set(mh)) if mb[k] != mh[k])
        out.append("differs (%d -> %d instructions; %s)" % (len(b), len(h), moved or "same mix, other registers"))
    print("loops: " + ", ".join(out) if out else "loops: none of 64+ instructions")


if __name__ == "__main__":
    main()
