#!/usr/bin/env python3
"""Paired timing of commands on one directory, alternating so that a change in the machine's
load hits both sides alike (docs/performance.md). Standard library only.

    tools/pair_time.py RUNS DIR 'CMD_A {dir} -o {out}' 'CMD_B {dir} -o {out}' ...

Each command is split on spaces; {dir} is DIR and {out} a temporary output path (a file, or a
directory for --output-dir). One warm-up run each, then RUNS rounds (A, B, then B, A, ...).
Prints the medians of wall time and of CPU time (user + system of the child, from getrusage),
their minimums (the least disturbed run on a loaded machine), and for two commands the medians
of the per-round ratios A/B.
"""
import os, resource, shutil, statistics, subprocess, sys, time
runs = int(sys.argv[1]); d = sys.argv[2]; cmds = sys.argv[3:]
res = [[] for _ in cmds]
def one(c, i):
    out = f"/tmp/pair-{os.getpid()}-{i}.yaml"
    argv = c.format(dir=d, out=out).split()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    t1 = time.perf_counter(); r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(out) if os.path.isdir(out) else os.unlink(out) if os.path.exists(out) else None
    return t1 - t0, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
for c_i, c in enumerate(cmds): one(c, c_i)  # warm-up
for r in range(runs):
    order = list(range(len(cmds)))
    if r % 2: order.reverse()
    for i in order: res[i].append(one(cmds[i], i))
for i, c in enumerate(cmds):
    w = statistics.median(x[0] for x in res[i]); cpu = statistics.median(x[1] for x in res[i])
    wmin = min(x[0] for x in res[i]); cmin = min(x[1] for x in res[i])
    print(f"{i}\twall {w:.4f}\tcpu {cpu:.4f}\t(min wall {wmin:.4f}, cpu {cmin:.4f})\t{c}")
if len(cmds) == 2:
    rw = statistics.median(a[0] / b[0] for a, b in zip(res[0], res[1]))
    rc = statistics.median(a[1] / b[1] for a, b in zip(res[0], res[1]))
    print(f"paired median ratio A/B: wall {rw:.3f} cpu {rc:.3f}")
