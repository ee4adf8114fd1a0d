#!/usr/bin/env python3
"""The box argument against the closure engine on mutants of the ring collectives.

    mutate_check.py DKV FIRST_SEED LAST_SEED [--beyond K] [--examples DIR]

Each seed takes one of the kernels of the fragment UG in examples/ (all_gather,
all_gather_bidirectional, all_reduce, reduce_scatter_bidirectional, collective_matmul)
and changes one to three things at random (a statement deleted, a wait made one-sided,
left and right swapped once, an index moved by a step or a device, a remainder's offset
changed), then asks `dkv check --devices 2..`. A "verified for every N" must hold at each
N beyond the instances the run checked one by one, for K more of them (default 8): the
closure engine (exact) must verify each. A "findings at N = n" must be the first N with
findings. Prints a line per disagreement and a summary; exits 1 on any. The seed is
printed with every line: `mutate_check.py DKV S S` reruns one."""
import argparse, os, random, re, subprocess, sys, tempfile

KERNELS = ["all_gather", "all_gather_bidirectional", "all_reduce",
           "reduce_scatter_bidirectional", "collective_matmul"]


def mutate(text, rng):
    lines = text.split("\n")
    body = [i for i, l in enumerate(lines)
            if l.startswith("  ") and not l.strip().startswith("//") and l.strip() not in ("}", "{")
            and "scratch" not in l and "} else" not in l and not l.strip().endswith("{")]
    done = []
    want = rng.randint(1, 3)
    for _ in range(200):  # attempts: most (kind, line) choices do not apply
        if len(done) == want:
            break
        kind = rng.choice(["delete", "wait", "swap", "index", "offset", "offset", "parity"])
        i = rng.choice(body)
        l = lines[i]
        if kind == "delete" and ("wait" in l or "signal" in l or ".start()" in l or "] =" in l
                                 or "] +=" in l):
            lines[i] = ""
        elif kind == "wait" and ".wait()" in l:
            lines[i] = l.replace(".wait()", rng.choice([".wait_send()", ".wait_recv()"]))
        elif kind == "swap" and ("left" in l or "right" in l):
            a, b = rng.choice([("left", "right"), ("right", "left")])
            lines[i] = l.replace(a, b, 1)
        elif kind == "index" and "[" in l and "step" in l:
            lines[i] = l.replace("step", rng.choice(["(step + 1)", "(step + N - 1)"]), 1)
        elif kind == "parity" and "% 2" in l:
            lines[i] = l.replace("step % 2", "(step + 1) % 2", 1).replace("1 - working", "working", 1)
            if lines[i] == l:
                continue
        elif kind == "offset" and "% N" in l:
            if ") % N" not in l:
                continue
            k = rng.choice([1, 2, -1, -2])
            lines[i] = l.replace(") % N", " + N + %d) %% N" % k, 1)
        else:
            continue
        done.append("%s line %d" % (kind, i + 1))
    return "\n".join(lines), done



def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dkv")
    ap.add_argument("first", type=int)
    ap.add_argument("last", type=int)
    ap.add_argument("--beyond", type=int, default=8)
    ap.add_argument("--examples", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                       "examples"))
    a = ap.parse_args()
    counts = {"verified": 0, "findings": 0, "inconclusive": 0, "static": 0, "failed": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(a.first, a.last + 1):
            rng = random.Random(seed)
            name = rng.choice(KERNELS)
            text = open(os.path.join(a.examples, name + ".dk")).read()
            mutant, done = mutate(text, rng)
            path = os.path.join(tmp, "seed_%d.dk" % seed)
            open(path, "w").write(mutant)
            r = run([a.dkv, "check", path, "--devices", "2.."])
            verdict = (r.stdout.strip().split("\n") or [""])[-1]
            what = "seed %d (%s, %s)" % (seed, name, ", ".join(done) or "unchanged")
            if r.returncode == 2:
                counts["static"] += 1
                continue
            if verdict.startswith("verified for every N >= 2:"):
                m = re.search(r"N = 2 to (\d+) checked one by one", verdict)
                upto = int(m.group(1)) if m else 16
                bad = None
                for n in range(upto + 1, upto + 1 + a.beyond):
                    c = run([a.dkv, "check", path, "--devices", str(n), "--engine", "closure",
                             "--no-confirm", "--format", "short"])
                    if c.returncode == 2:
                        break
                    if c.returncode != 0:
                        bad = "verified for every N, but the closure engine exits %d at N = %d" % (
                            c.returncode, n)
                        break
                if bad:
                    print("FAIL %s: %s" % (what, bad))
                    counts["failed"] += 1
                else:
                    counts["verified"] += 1
            elif "has findings at N = " in verdict:
                n = int(re.search(r"has findings at N = (\d+)", verdict).group(1))
                first = None
                for m_ in range(2, n + 1):
                    c = run([a.dkv, "check", path, "--devices", str(m_), "--engine", "closure",
                             "--no-confirm", "--format", "short"])
                    if c.returncode == 10:
                        first = m_
                        break
                if first != n:
                    print("FAIL %s: findings at N = %d, the first N with findings is %s" % (
                        what, n, first))
                    counts["failed"] += 1
                else:
                    counts["findings"] += 1
            elif verdict.startswith("inconclusive for every N"):
                counts["inconclusive"] += 1
            else:
                print("FAIL %s: %s" % (what, verdict))
                counts["failed"] += 1
    print("mutate_check: seeds %d-%d: %d verified for every N (each checked %d instances "
          "further), %d with findings, %d inconclusive, %d static errors, %d failed" % (
              a.first, a.last, counts["verified"], a.beyond, counts["findings"],
              counts["inconclusive"], counts["static"], counts["failed"]))
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
