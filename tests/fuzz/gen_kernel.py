#!/usr/bin/env python3
"""Random small dkv kernel generator for differential testing of the engines.

    gen_kernel.py SEED [-o FILE] [--devices N] [--cores] [--ring] [--uniform] [--growing]

Writes one kernel for a 1-axis mesh of N = 2 or 3 devices (chosen from the seed
unless --devices is given). The kernel uses a few small scratch buffers, regular and
DMA semaphores (scalars and arrays), optionally a collective_id with barrier
signals/waits, and 1-6 top-level statements drawn from: local copies and remote
copies with start / wait / wait_send / wait_recv (sometimes omitted, duplicated or
split between devices), signal/wait on regular semaphores to neighbours (sometimes
mismatched), stores and += on slices (sometimes overlapping DMA regions), `if` on
axis_index, small `for` loops and `run_scoped` blocks. Some copies move a
per-device width `w` read from a table (`in zw: smem i32[N] = [...]`, values 0..2), so
zero-size slices and zero-byte DMAs (docs/model.md) occur. About a third of the kernels
also get an inner pipeline of local copies (double-buffered into b[0] / b[1], block
i + 1 prefetched while block i is waited for and read), inserted between two top-level
statements and sometimes broken (prefetch into the slot in use, a wait left out, its
semaphore shared with the remote copies' `rd`/`sd`, reads into buffers that remote
copies use). The table widths and the pipeline each come from their own random stream
seeded from SEED, so that the other statements of a seed's kernel stay what they were.
Many kernels are buggy on purpose. The first line says the seed and N, so the file is
self-describing. With --cores the kernel runs on the N TensorCores of one device
(`on_cores`), so that the cores' DMAs meet in the HBM they share. With --ring it is
rotation-symmetric (neighbours only, no condition on the device, one table width), on
N = 3 or 4 devices: the kernels the symmetry reduction applies to (docs/closure.md).
With --uniform also no condition on N and no table: kernels of the fragment of
docs/parametric.md, for the window argument's campaign. With --growing a --uniform
kernel gets a grid of N - 1 or N steps (the fragment UG of docs/parametric.md): its
conditions compare the step with constants and with N - 1, N - 2, its semaphores may be
the step's own (`ps[step]`, `pt[step]`) and a buffer slot alternates with the step.
Python 3 standard library only.
"""
import argparse
import random
import sys


class Gen:
    def __init__(self, seed, devices=None, cores=False, ring=False, uniform=False,
                 growing=False):
        self.cores = cores
        self.R = random.Random(seed)
        self.seed = seed
        self.growing = growing
        uniform = uniform or growing
        self.ring = ring or uniform
        self.uniform = uniform
        # The step-grid's own stream: the other choices stay those of --uniform.
        self.G = random.Random(seed * 65537 + 3)
        self.g = self.G.choice([-1, 0])
        self.N = devices if devices else self.R.choice([2, 3])
        self.coll = self.R.random() < 0.35
        self.counter = 0
        self.has_c = self.R.random() < 0.4
        self.grid = self.R.random() < 0.1
        # Table-width copies: a separate stream (the main one is unchanged by them).
        self.Z = random.Random(seed * 7919 + 17)
        self.widths = [self.Z.randrange(3) for _ in range(self.N)]
        if ring:  # every device the same width: the rotation maps the table onto itself
            self.widths = [self.widths[0]] * self.N
        self.used_w = False
        # The local-copy pipeline has its own stream, so that the other statements of
        # a seed's kernel stay what they were before it existed.
        self.P = random.Random(seed * 1000003 + 17)

    # ---------------------------------------------------------------- helpers
    def fresh(self, prefix):
        self.counter += 1
        return "%s%d" % (prefix, self.counter)

    def chance(self, p):
        return self.R.random() < p

    def pick(self, xs):
        return self.R.choice(xs)

    def device(self):
        R = self.R
        r = R.random()
        if self.ring:  # neighbours only: every device runs the same code, rotated
            return "right" if r < 0.45 else "left" if r < 0.85 else "me"
        if r < 0.45:
            return "right"
        if r < 0.75:
            return "left"
        if r < 0.85:
            return str(R.randrange(self.N))
        if r < 0.92:
            return "me"
        return "N - 1"

    # refs grouped by shape; each entry: (text, writable)
    def refs(self, shape, ctx):
        loop = ctx.get("loop")
        scoped = ctx.get("scoped", [])
        if shape == "w":  # `w` elements, per device (possibly 0)
            self.used_w = True
            rs = [("a[0:w]", True), ("a[2:2 + w]", True), ("b[1, 1:1 + w]", True),
                  ("outp[1:1 + w]", True), ("inp[2:2 + w]", False)]
        elif shape == 4:
            rs = [("outp", True), ("a", True), ("b[0]", True), ("b[1]", True), ("inp", False)]
            if self.growing:
                rs.append(("b[step % 2]", True))
                # Rows of an N-row buffer: positions modulo N that move with the device and
                # the step (docs/parametric.md "Races for every N").
                rs += [("g[(me - step + N) % N]", True), ("g[(me + step) % N]", True),
                       ("g[me]", True), ("g[(me + 1) % N]", True), ("g[(me + 2) % N]", True)]
            if self.has_c:
                rs.append(("c", True))
            if loop:
                rs.append(("b[%s]" % loop, True))
            for t in scoped:
                rs.append((t, True))
        else:  # shape 2
            rs = [("a[0:2]", True), ("a[2:4]", True), ("a[1:3]", True),
                  ("b[0, 0:2]", True), ("b[1, 2:4]", True), ("b[0, 1:3]", True),
                  ("outp[0:2]", True), ("outp[2:4]", True),
                  ("inp[0:2]", False), ("inp[1:3]", False)]
            if loop:
                rs.append(("a[2 * %s:2 * %s + 2]" % (loop, loop), True))
                rs.append(("b[%s, 0:2]" % loop, True))
            for t in scoped:
                rs.append(("%s[0:2]" % t, True))
        return rs

    def src_ref(self, shape, ctx):
        return self.pick(self.refs(shape, ctx))[0]

    def local(self, ref):
        """A ref a core may load or store. On the TensorCores of one device (--cores) inp
        and outp are the device's HBM, which a core reaches only by DMA (docs/model.md
        "TensorCores"), so a store or load of them names its VMEM mirror (inv, outv)
        instead; the random choices stay those of the device kernel."""
        if not self.cores:
            return ref
        for hbm, vmem in (("outp", "outv"), ("inp", "inv")):
            if ref == hbm or ref.startswith(hbm + "["):
                return vmem + ref[len(hbm):]
        return ref

    def dst_ref(self, shape, ctx):
        return self.pick([r for r, w in self.refs(shape, ctx) if w])

    def dma_sem(self, ctx, role):
        loop = ctx.get("loop")
        scoped_sems = ctx.get("scoped_sems", [])
        opts = {"send": ["sd", "sd", "da[0]", "rd"],
                "recv": ["rd", "rd", "da[1]", "sd"],
                "local": ["ld", "ld", "da[0]", "rd"]}[role]
        opts = list(opts)
        if self.growing and self.G.random() < 0.4:
            opts.append("ps[step]")
        if loop:
            opts.append("da[%s]" % loop)
        opts.extend(scoped_sems)
        return self.pick(opts)

    def reg_sem(self, ctx):
        loop = ctx.get("loop")
        opts = ["s", "s", "s", "t[0]", "t[1]"]
        if self.growing and self.G.random() < 0.4:
            opts.append("pt[step]")
        if loop:
            opts.append("t[%s]" % loop)
        return self.pick(opts)

    def cond(self):
        N = self.N
        if self.growing:  # the same on every device; the step against constants and N
            return self.pick(["1 == 1", "0 == 1", "step == 0", "step > 0", "step == 1",
                              "step < 2", "step == N - 1", "step == N - 2", "step != N - 2",
                              "step >= N - 2 and step > 0"])
        if self.uniform:  # the same on every device and for every N
            return self.pick(["1 == 1", "0 == 1", "2 > 1"])
        if self.ring:  # the same on every device
            return self.pick(["N > 2", "N == 2", "N > 1", "N % 2 == 0"])
        return self.pick(["me == 0", "me == 1", "me != 0", "me < N - 1",
                          "me == N - 1", "me > 0", "me % 2 == 0"])

    # ---------------------------------------------------------- statements
    # Each generator returns (now, later): two lists of lines (no indentation);
    # `later` (descriptor waits) is placed after some more statements of the same block.

    def width_shape(self, shape):
        if self.uniform:  # no table: the fragment of docs/parametric.md has none
            return shape
        return "w" if self.Z.random() < 0.2 else shape

    def st_remote(self, ctx):
        shape = self.width_shape(self.pick([4, 4, 2]))
        src = self.src_ref(shape, ctx)
        dst = self.dst_ref(shape, ctx)
        if self.chance(0.5):
            dst = src if src != "inp" and not src.startswith("inp[") else dst
        snd, rcv = self.dma_sem(ctx, "send"), self.dma_sem(ctx, "recv")
        dev = self.device()
        d = self.fresh("r")
        decl = "let %s = remote_copy(%s, %s, %s, %s, device = %s)" % (d, src, dst, snd, rcv, dev)
        r = self.R.random()
        if r < 0.52:
            now, later = [decl, d + ".start()"], [d + ".wait()"]
        elif r < 0.67:
            now, later = [decl, d + ".start()"], [d + ".wait_send()", d + ".wait_recv()"]
        elif r < 0.71:
            now, later = [decl, d + ".start()"], [d + ".wait_recv()", d + ".wait_send()"]
        elif r < 0.75:
            now, later = [decl, d + ".start()"], [d + ".wait_send()"]
        elif r < 0.78:
            now, later = [decl, d + ".start()"], []
        elif r < 0.8:
            now, later = [decl, d + ".start()"], [d + ".wait()", d + ".wait_recv()"]
        else:
            # table style: one sender under a condition, its target waits for it
            if self.chance(0.7) and not self.ring:
                k = self.R.randrange(self.N)
                j = self.pick([x for x in range(self.N) if x != k] or [k])
                decl = "let %s = remote_copy(%s, %s, %s, %s, device = %d)" % (d, src, dst, snd, rcv, j)
                sc, rc = "me == %d" % k, "me == %d" % j
            else:
                sc = self.cond()
                rc = None
                if self.chance(0.5):
                    rc = self.cond() if self.ring else self.pick(
                        ["me == 1", "me == 0", "me != 0", "me == N - 1", "me > 0"])
            now = [decl, "if %s {" % sc, "  %s.start()" % d, "  %s.wait_send()" % d, "}"]
            if rc is None:
                now += ["%s.wait_recv()" % d]
            else:
                now += ["if %s {" % rc, "  %s.wait_recv()" % d, "}"]
            later = []
        return now, later

    def st_local(self, ctx):
        shape = self.width_shape(self.pick([4, 2]))
        src = self.src_ref(shape, ctx)
        dst = self.dst_ref(shape, ctx)
        sem = self.dma_sem(ctx, "local")
        d = self.fresh("l")
        decl = "let %s = copy(%s, %s, %s)" % (d, src, dst, sem)
        r = self.R.random()
        if r < 0.82:
            return [decl, d + ".start()"], [d + ".wait()"]
        if r < 0.88:
            return [decl, d + ".start()"], []
        if r < 0.94:
            return [decl, d + ".start()"], [d + ".wait()", d + ".wait()"]
        return [decl, d + ".start()", d + ".start()"], [d + ".wait()", d + ".wait()"]

    def st_signal(self, ctx):
        sem = self.reg_sem(ctx)
        amt = self.pick([1, 1, 1, 2])
        dev = self.device()
        r = self.R.random()
        if r < 0.82:
            w = amt
        elif r < 0.92:
            w = amt + self.pick([-1, 1]) if amt > 1 else 2
        else:
            w = None
        sig = "signal(%s, %d, device = %s)" % (sem, amt, dev) if self.chance(0.85) else "signal(%s, %d)" % (sem, amt)
        now = [sig]
        later = [] if w is None else ["wait(%s, %d)" % (sem, w)]
        if self.chance(0.15) and later:
            # the wait first (a handshake in the wrong order)
            return later + now, []
        return now, later

    def st_barrier(self, ctx):
        if not self.coll:
            return self.st_signal(ctx)
        r = self.R.random()
        if r < 0.6:
            return (["signal(barrier, 1, device = left)", "signal(barrier, 1, device = right)",
                     "wait(barrier, 2)"], [])
        if r < 0.8:
            return (["signal(barrier, 1, device = left)", "wait(barrier, 1)"], [])
        return (["signal(barrier, 1, device = %s)" % self.device(),
                 "wait(barrier, %d)" % self.pick([1, 1, 2])], [])

    def value(self, shape, ctx):
        r = self.R.random()
        if r < 0.2:
            return self.pick(["0", "1.0", "2.5"])
        x = self.local(self.src_ref(shape, ctx))
        if r < 0.6:
            return x
        y = self.local(self.src_ref(shape, ctx))
        return self.pick(["%s + %s" % (x, y), "%s * 2.0" % x, "max(%s, %s)" % (x, y), "-%s" % x])

    def st_store(self, ctx):
        shape = self.pick([4, 2, 2])
        dst = self.local(self.dst_ref(shape, ctx))
        op = "+=" if self.chance(0.35) else "="
        if dst in ("a", "outp", "outv", "c") and self.chance(0.2):
            return ["%s[...] %s %s" % (dst, op, self.value(shape, ctx))], []
        return ["%s %s %s" % (dst, op, self.value(shape, ctx))], []

    def st_read(self, ctx):
        v = self.fresh("v")
        sem = self.reg_sem(ctx)
        return ["let %s = read(%s)" % (v, sem), "%s = %s" % (self.local(self.dst_ref(2, ctx)), v)], []

    def st_if(self, ctx, depth):
        c = self.cond()
        body = self.block(ctx, depth + 1, self.R.randint(1, 2))
        lines = ["if %s {" % c] + ["  " + l for l in body]
        if self.chance(0.5):
            other = self.block(ctx, depth + 1, self.R.randint(1, 2))
            lines += ["} else {"] + ["  " + l for l in other]
        lines.append("}")
        return lines, []

    def st_for(self, ctx, depth):
        if ctx.get("loop"):
            return self.st_store(ctx)
        i = self.fresh("i")
        c2 = dict(ctx)
        c2["loop"] = i
        body = self.block(c2, depth + 1, self.R.randint(1, 2))
        return ["for %s in 0 .. 2 {" % i] + ["  " + l for l in body] + ["}"], []

    def st_scoped(self, ctx, depth):
        tb, ts = self.fresh("tmp"), self.fresh("ts")
        c2 = dict(ctx)
        c2["scoped"] = ctx.get("scoped", []) + [tb]
        c2["scoped_sems"] = ctx.get("scoped_sems", []) + [ts]
        # usually starts with a copy into/out of the scoped buffer
        lines = []
        d = self.fresh("l")
        if self.chance(0.6):
            src = self.src_ref(4, ctx)
            lines += ["let %s = copy(%s, %s, %s)" % (d, src, tb, ts), d + ".start()"]
            if self.chance(0.8):
                lines.append(d + ".wait()")
        body = self.block(c2, depth + 1, self.R.randint(1, 2))
        lines += body
        if self.chance(0.5):
            d2 = self.fresh("l")
            dst = self.dst_ref(4, ctx)
            lines += ["let %s = copy(%s, %s, %s)" % (d2, tb, dst, ts), d2 + ".start()"]
            if self.chance(0.85):
                lines.append(d2 + ".wait()")
        return (["run_scoped(%s: vmem f32[4], %s: dma_sem) {" % (tb, ts)]
                + ["  " + l for l in lines] + ["}"], [])

    def pipeline(self):
        """A double-buffered loop of local copies (the inner pipeline of a collective
        matmul), sometimes broken; drawn from self.P only."""
        P = self.P
        i = self.fresh("i")
        first, nxt, cur = self.fresh("p"), self.fresh("p"), self.fresh("p")
        steps = P.choice([2, 2, 3])
        src = P.choice(["inp", "inp", "a", "outp"])
        sems = P.choice([("da[0]", "da[1]"), ("da[0]", "da[1]"), ("ld", "ld"),
                         ("da[0]", "rd"), ("sd", "da[1]")])
        slot = "b[%s %% 2]" % i
        nslot = "b[(%s + 1) %% 2]" % i
        if P.random() < 0.15:  # BUG: the prefetch goes into the slot in use
            nslot = slot
        sem_of = lambda e: ("da[%s]" % e) if sems == ("da[0]", "da[1]") else None
        s_cur = sem_of("%s %% 2" % i) or sems[0]
        s_nxt = sem_of("(%s + 1) %% 2" % i) or sems[1]
        dst = P.choice(["outp", "outp", "a", "c" if self.has_c else "outp"])
        op = P.choice(["=", "+="])
        lines = ["let %s = copy(%s, b[0], %s)" % (first, src, sems[0]), first + ".start()",
                 "for %s in 0 .. %d {" % (i, steps),
                 "  if %s + 1 < %d {" % (i, steps),
                 "    let %s = copy(%s, %s, %s)" % (nxt, src, nslot, s_nxt),
                 "    %s.start()" % nxt,
                 "  }",
                 "  let %s = copy(%s, %s, %s)" % (cur, src, slot, s_cur)]
        if P.random() < 0.9:  # else BUG: no wait
            lines.append("  %s.wait()" % cur)
        lines.append("  %s %s %s" % (self.local(dst), op, slot))
        lines.append("}")
        return lines

    def statement(self, ctx, depth):
        kinds = [("remote", 30), ("local", 12), ("signal", 12), ("store", 18),
                 ("barrier", 6 if self.coll else 0), ("read", 2)]
        if depth < 2:
            kinds += [("if", 8), ("for", 6), ("scoped", 5)]
        tot = sum(w for _, w in kinds)
        x = self.R.uniform(0, tot)
        for k, w in kinds:
            x -= w
            if x <= 0:
                break
        if k in ("if", "for", "scoped"):
            return getattr(self, "st_" + k)(ctx, depth)
        return getattr(self, "st_" + k)(ctx)

    def block(self, ctx, depth, n):
        out = []
        pending = []  # [(countdown, lines)]
        for _ in range(n):
            now, later = self.statement(ctx, depth)
            out += now
            for p in pending:
                p[0] -= 1
            for p in [p for p in pending if p[0] < 0]:
                out += p[1]
            pending = [p for p in pending if p[0] >= 0]
            if later:
                delay = 0 if self.chance(0.6) else self.R.randint(1, 2)
                if delay == 0:
                    out += later
                else:
                    pending.append([delay - 1, later])
        for p in pending:
            out += p[1]
        return out

    def kernel(self):
        N = self.N
        head = ["// fuzz seed %d, devices %d" % (self.seed, N),
                "param N = %d" % N, "mesh x = N", ""]
        attrs = ""
        if self.growing:
            attrs += " grid(N - 1)" if self.g < 0 else " grid(N)"
        elif self.grid:
            attrs += " grid(2)"
        if self.coll:
            attrs += " collective_id(0)"
        body = ["scratch a: vmem f32[4], b: vmem f32[2, 4]" + (", c: vmem f32[4]" if self.has_c else "")
                + (", inv: vmem f32[4], outv: vmem f32[4]" if self.cores else ""),
                "scratch s: sem, t: sem[2]",
                "scratch sd: dma_sem, rd: dma_sem, ld: dma_sem, da: dma_sem[2]",
                "let me = axis_index(x)",
                "let right = (me + 1) % N",
                "let left = (me + N - 1) % N"]
        if self.growing:
            body[0] += ", g: vmem f32[N, 4]"
            body[1] += ", pt: sem[N]"
            body[2] += ", ps: dma_sem[N]"
            body.append("let step = program_id(0)")
        if self.coll and self.chance(0.6):
            body += self.st_barrier({})[0]
        n = self.R.randint(1, 6)
        body += self.block({}, 0, n)
        if self.P.random() < 0.35:
            # between two top-level statements (a line that starts one at depth 0)
            first = 7 if self.growing else 6
            at = [k for k, l in enumerate(body)
                  if k >= first and not l.startswith(" ") and not l.startswith("}")]
            at.append(len(body))
            k = self.P.choice(at)
            body[k:k] = self.pipeline()
        table = ""
        if self.used_w:
            # One row per device: device d copies widths[d] elements.
            table = ", in zw: smem i32[1] = [%s]" % ", ".join("[%d]" % v for v in self.widths)
            body.insert(body.index("let left = (me + N - 1) % N") + 1, "let w = zw[0]")
        return "\n".join(head + ["kernel fuzz(in inp: hbm f32[4], out outp: hbm f32[4]%s)%s {" % (table, attrs)]
                         + ["  " + l for l in body] + ["}", ""])


def on_cores(text):
    """The same kernel run by the N TensorCores of one device (docs/model.md "TensorCores"):
    `tensorcore_mesh core = N` on a mesh of one device, the core index where the device
    index was, device ids naming cores (`device = {core: ...}`), and the per-device table
    rows as one row indexed by the core. inp and outp are the device's HBM, which the
    cores share and reach only by DMA: the cores' DMAs into them meet on one instance,
    and their loads and stores use VMEM mirrors instead (Gen.local)."""
    import re
    text = text.replace("mesh x = N\n", "mesh x = 1\ntensorcore_mesh core = N\n", 1)
    text = text.replace("let me = axis_index(x)", "let me = axis_index(core)")
    # A kernel over cores has no grid: its body runs once per core (grid steps never
    # name program_id in these kernels).
    text = re.sub(r"\) grid\(\d+\)", ")", text)
    text = re.sub(r"device = ([^)]+)\)", r"device = {core: \1})", text)
    m = re.search(r"in zw: smem i32\[1\] = \[(.*?)\]\)", text)
    if m:
        rows = re.findall(r"\[(\d+)\]", m.group(1))
        text = text.replace(m.group(0), "in zw: smem i32[N] = [%s])" % ", ".join(rows))
        text = text.replace("let w = zw[0]", "let w = zw[me]")
    return text.replace("// fuzz seed", "// fuzz (TensorCores of one device) seed", 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("seed", type=int)
    ap.add_argument("-o", "--output")
    ap.add_argument("--devices", type=int, choices=[2, 3, 4, 5],
                    help="N (4 and 5 with --ring only: windows of the closure engine need a "
                         "device two rotation steps away)")
    ap.add_argument("--cores", action="store_true",
                    help="run the kernel on the N TensorCores of one device instead")
    ap.add_argument("--ring", action="store_true",
                    help="a rotation-symmetric kernel: every device runs the same code and "
                         "talks to its neighbours only (N = 3 or 4 unless --devices)")
    ap.add_argument("--growing", action="store_true",
                    help="a --uniform kernel whose grid grows with N (N - 1 or N steps): the "
                         "fragment UG of docs/parametric.md")
    ap.add_argument("--uniform", action="store_true",
                    help="a --ring kernel in the fragment of docs/parametric.md: no condition "
                         "on N and no table, so every N runs the same program")
    a = ap.parse_args()
    ring = a.ring or a.uniform or a.growing
    if a.devices and a.devices > 3 and not ring:
        ap.error("--devices 4 or 5 needs --ring or --uniform")
    devices = a.devices if a.devices or not ring else random.Random(a.seed * 31 + 7).choice([3, 4])
    text = Gen(a.seed, devices, a.cores, a.ring, a.uniform, a.growing).kernel()
    if a.cores:
        text = on_cores(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
