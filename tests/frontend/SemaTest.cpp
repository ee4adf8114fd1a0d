// Unit tests of sema: one failing and one passing kernel per diagnostic id, types, constants.
#include "TestUtil.h"

#include "frontend/Sema.h"

#include <gtest/gtest.h>

namespace dkv::frontend {
namespace {

using namespace ast;
using test::load;

// A kernel on a 4-device mesh with common buffers and semaphores.
std::string kernel(const std::string &body, const std::string &attrs = "") {
  return "param N = 4\nconst H = N / 2\nmesh x = N\n"
         "kernel k(in a: hbm f32[8, 128], out o: hbm f32[8, 128], inout h: hbm bf16[8, 128])" +
         attrs + " {\n  scratch s: sem, d: dma_sem, r: dma_sem[3], v: vmem f32[2, 8, 128]\n" +
         body + "\n}\n";
}

// A kernel over a TensorCore mesh of C = 2 cores on a 2-device mesh `x`.
std::string coreKernel(const std::string &body, const std::string &attrs = " collective_id(0)") {
  return "param C = 2\nmesh x = 2\ntensorcore_mesh core = C\n"
         "kernel k(in a: hbm f32[8, 128], out o: hbm f32[8, 128])" +
         attrs + " {\n  scratch d: dma_sem, v: vmem f32[8, 128]\n" + body + "\n}\n";
}

struct Case {
  const char *id;
  std::string bad;
  std::string good;
};

class SemaDiagnostic : public testing::TestWithParam<Case> {};

TEST_P(SemaDiagnostic, BadReportsIdGoodPasses) {
  const Case &c = GetParam();
  auto bad = load(c.bad);
  EXPECT_FALSE(bad.ok);
  EXPECT_TRUE(bad.has(c.id)) << "expected [" << c.id << "]:\n" << c.bad << "\n" << bad.rendered();
  auto good = load(c.good);
  EXPECT_TRUE(good.ok) << c.good << "\n" << good.rendered();
}

INSTANTIATE_TEST_SUITE_P(
    Ids, SemaDiagnostic,
    testing::Values(
        Case{"unknown-name", kernel("let i = j + 1"), kernel("let i = N + 1")},
        Case{"redefinition", kernel("let s = 1"), kernel("let t = 1")},
        Case{"missing-mesh", "kernel k() {}", "mesh x = 2\nkernel k() {}"},
        Case{"missing-kernel", "mesh x = 2", "mesh x = 2\nkernel k() {}"},
        Case{"duplicate-mesh", "mesh x = 2\nmesh y = 2\nkernel k() {}",
             "mesh x = 2, y = 2\nkernel k() {}"},
        Case{"duplicate-kernel", "mesh x = 2\nkernel k() {}\nkernel l() {}",
             "mesh x = 2\nkernel k() {}"},
        Case{"missing-param-value", "param M\nmesh x = M\nkernel k() {}",
             "param M = 2\nmesh x = M\nkernel k() {}"},
        Case{"not-constant", kernel("scratch b: vmem f32[axis_index(x)]"),
             kernel("scratch b: vmem f32[H]")},
        Case{"invalid-size", "mesh x = 0\nkernel k() {}", "mesh x = 1\nkernel k() {}"},
        Case{"division-by-zero", "const Z = 1 / 0\nmesh x = 2\nkernel k() {}",
             "const Z = 1 / 1\nmesh x = 2\nkernel k() {}"},
        Case{"overflow", "const Z = 9223372036854775807 + 1\nmesh x = 2\nkernel k() {}",
             "const Z = 9223372036854775806 + 1\nmesh x = 2\nkernel k() {}"},
        Case{"type-mismatch", kernel("let i = s + 1"), kernel("let i = N + 1")},
        Case{"shape-mismatch", kernel("let c = copy(a[0], o, d)"),
             kernel("let c = copy(a[0], o[1], d)")},
        Case{"dtype-mismatch", kernel("let c = copy(a, h, d)"), kernel("let c = copy(h, h, d)")},
        Case{"out-of-bounds", kernel("let c = copy(a[0:9], o[0:9], d)"),
             kernel("let c = copy(a[0:8], o[0:8], d)")},
        Case{"index-count", kernel("o[0, 0, 0] = 1"), kernel("o[0, 0] = 1")},
        Case{"device-out-of-range", kernel("signal(s, device = N)"),
             kernel("signal(s, device = N - 1)")},
        Case{"device-arity", kernel("signal(s, device = (1, 0))"),
             kernel("signal(s, device = (1,))")},
        Case{"sem-kind", kernel("signal(d)"), kernel("signal(s)")},
        Case{"descriptor-kind", kernel("let c = copy(a, o, d)\n c.wait_recv()"),
             kernel("let c = copy(a, o, d)\n c.wait()")},
        Case{"grid-dim", kernel("let i = program_id(1)", " grid(2)"),
             kernel("let i = program_id(0)", " grid(2)")},
        Case{"no-collective-id", kernel("signal(barrier)"),
             kernel("signal(barrier)", " collective_id(0)")},
        Case{"write-to-input", kernel("a[0] = 1"), kernel("o[0] = 1")},
        Case{"misplaced-expr", kernel("let i = read(s) + 1"), kernel("let i = read(s)")},
        Case{"invalid-value", kernel("wait(s, 0)"), kernel("wait(s, 2)")},
        Case{"invalid-shift", "const S = 1 << 64\nmesh x = 2\nkernel k() {}",
             "const S = -1 << 63 >> 63\nmesh x = 2\nkernel k() {}"},
        Case{"table-kind", "mesh x = 2\nkernel k(inout t: smem i32[2] = [1, 2]) {}",
             "mesh x = 2\nkernel k(in t: smem i32[2] = [1, 2]) {}"},
        Case{"table-value", "mesh x = 2\nkernel k(in t: smem i8[2] = [1, -129]) {}",
             "mesh x = 2\nkernel k(in t: smem i8[2] = [1, -128]) {}"},
        // Per device: one row per device of the mesh (2 here), not 3.
        Case{"table-shape", "mesh x = 2\nkernel k(in t: smem i32[1] = [[1], [2], [3]]) {}",
             "mesh x = 2\nkernel k(in t: smem i32[1] = [[1], [2]]) {}"},
        Case{"axis-out-of-range", kernel("o[0, 0:8] = sum(a, axis = 2)"),
             kernel("o[0, 0:8] = sum(a[:, 0:8], axis = 0)")},
        Case{"reshape-size", kernel("o[...] = reshape(a, (8, 64))"),
             kernel("o[...] = reshape(v[0:1], (8, 128))")},
        Case{"unsupported", kernel("o[...] = astype(bitcast(h, f32), f32)"),
             kernel("o[...] = astype(bitcast(h, i16), f32)")},
        Case{"unsupported", "mesh x = 2, core = 2\nkernel k() {}",
             "mesh x = 2, cores = 2\nkernel k() {}"},
        // TensorCore meshes (docs/language.md "TensorCores").
        Case{"core-out-of-range", coreKernel("signal(barrier, 1, device = {core: C})"),
             coreKernel("signal(barrier, 1, device = {core: C - 1})")},
        Case{"core-out-of-range", coreKernel("signal(barrier, 1, core_index = 2)"),
             coreKernel("signal(barrier, 1, core_index = 1)")},
        Case{"duplicate-mesh",
             "mesh x = 2\ntensorcore_mesh core = 2\ntensorcore_mesh c = 2\nkernel k() {}",
             "mesh x = 2\ntensorcore_mesh core = 2\nkernel k() {}"},
        Case{"misplaced-mesh", "mesh x = 2\nkernel k() {}\ntensorcore_mesh core = 2",
             "mesh x = 2\ntensorcore_mesh core = 2\nkernel k() {}"},
        Case{"bad-argument", kernel("signal(s, 1, core_index = 0)"), kernel("signal(s, 1)")},
        Case{"bad-argument", coreKernel("signal(barrier, 1, device = {core: 1}, core_index = 1)"),
             coreKernel("signal(barrier, 1, device = {x: 1}, core_index = 1)")},
        Case{"unsupported", coreKernel("", " grid(2)"), coreKernel("")},
        Case{"unsupported", coreKernel("scratch t: hbm f32[8]"),
             coreKernel("scratch t: vmem f32[8]")},
        Case{"unsupported", "mesh x = 2\ntensorcore_mesh core = 2\nkernel k(in v: vmem f32[8]) {}",
             "mesh x = 2\ntensorcore_mesh core = 1\nkernel k(in v: vmem f32[8]) {}"}));

// The compute functions' result types (docs/language.md "Compute on values").
TEST(Sema, ComputeResultTypes) {
  auto typeOf = [](const std::string &value) {
    auto r = load(kernel("o[...] = " + value));
    const auto *k = r.module ? r.module->kernel() : nullptr;
    if (!k || !r.ok)
      return "error: " + r.rendered();
    const auto &store = cast<StoreStmt>(*k->body().stmts().back());
    return store.value().type().str();
  };
  EXPECT_EQ(typeOf("dot(a[:, 0:8], v[0, 0:8, :])"), "value f32[8, 128]");
  EXPECT_EQ(typeOf("astype(dot(h[:, 0:8], astype(v[0, 0:8, :], bf16), preferred_element_type "
                   "= f32), f32)"),
            "value f32[8, 128]");
  EXPECT_EQ(typeOf("where(a > 0.0, a, 0.0)"), "value f32[8, 128]");
  EXPECT_EQ(typeOf("where(N > 2, a, 1.0)"), "value f32[8, 128]");
  EXPECT_EQ(typeOf("reshape(v[0:1], (8, 128))"), "value f32[8, 128]");
  EXPECT_EQ(typeOf("bitcast(bitcast(a, u32), f32)"), "value f32[8, 128]");
  EXPECT_EQ(typeOf("max(a, a)"), "value f32[8, 128]"); // element-wise, not a reduction
}

// The new compute of the fused MoE kernel, values in names, integer scratch and
// integer variables (docs/language.md).
TEST(Sema, MoeConstructTypes) {
  auto typeOf = [](const std::string &body, const std::string &value) {
    auto r = load(kernel(body + "\n o[...] = " + value));
    const auto *k = r.module ? r.module->kernel() : nullptr;
    if (!k || !r.ok)
      return "error: " + r.rendered();
    const auto &store = cast<StoreStmt>(*k->body().stmts().back());
    return store.value().type().str();
  };
  EXPECT_EQ(typeOf("", "concatenate([a[:, 0:28], a[:, 28:128]], axis = 1)"), "value f32[8, 128]");
  EXPECT_EQ(typeOf("", "concatenate([a[0:3], a[3:8]])"), "value f32[8, 128]");
  EXPECT_EQ(typeOf("let p, q = split(a, 2, axis = -1)", "concatenate([silu(p), gelu(q)], axis "
                                                        "= -1)"),
            "value f32[8, 128]");
  EXPECT_EQ(typeOf("", "sigmoid(a) + zeros((8, 128), f32)"), "value f32[8, 128]");
  EXPECT_EQ(
      typeOf("let io = broadcasted_iota(i32, (8, 128), 0)", "where(io >= 2 and io < 4, a, 0.0)"),
      "value f32[8, 128]");
  EXPECT_EQ(typeOf("var acc = zeros((8, 128), f32)\n acc += a", "acc"), "value f32[8, 128]");
  EXPECT_EQ(typeOf("let w = a[0:8]", "w[0:500]"), "value f32[8, 128]"); // NumPy clamps
  // An integer scratch element is an integer; a slice of it stays a ref.
  auto scratch = [](const std::string &expr) {
    auto r = load(kernel("scratch meta: smem i32[4]\n meta[0] = 1\n let t = " + expr));
    const auto *k = r.module ? r.module->kernel() : nullptr;
    if (!k || !r.ok)
      return "error: " + r.rendered();
    return cast<LetStmt>(*k->body().stmts().back()).decl().init().type().str();
  };
  EXPECT_EQ(scratch("meta[0] + 1"), "int");
  EXPECT_EQ(scratch("meta[0:2]"), "ref i32[2]");
  EXPECT_EQ(scratch("o[meta[1]]"), "ref f32[128]");
  auto var = load(kernel("var n = 0, m = N\n n += m\n for i in n .. m { o[i] = 1.0 }"));
  EXPECT_TRUE(var.ok) << var.rendered();
}

TEST(Sema, UnknownDefineNeedsADefine) {
  auto r = load("mesh x = 2\nkernel k() {}", {{"Q", 3}});
  EXPECT_EQ(r.ids(), std::vector<std::string>{"unknown-define"});
}

// A TensorCore axis is refused at the axis (never modelled as devices), and the message
// says why: shared HBM per chip, the guide it comes from and the model's section on it.
TEST(Sema, CoreAxisOfTheDeviceMeshIsRefusedAtTheAxis) {
  auto r = load("mesh device = 2, core = 2\nkernel k() {}");
  EXPECT_EQ(r.ids(), std::vector<std::string>{"unsupported"});
  const std::string text = r.rendered();
  EXPECT_NE(text.find("test.dk:1:18: error:"), std::string::npos) << text;
  EXPECT_NE(text.find("share its HBM"), std::string::npos) << text;
  EXPECT_NE(text.find("tensorcore_mesh core = N"), std::string::npos) << text;
  // Only the name decides: an axis of devices with another name is accepted.
  EXPECT_TRUE(load("mesh device = 2, cores = 2\nkernel k() {}").ok);
}

TEST(Sema, TensorCoreMeshDeclaresTheCoreAxis) {
  auto r = load(coreKernel("let me = axis_index(core)\nlet n = axis_size(core)\n"
                           "signal(barrier, 1, device = {core: (me + 1) % n})\n"
                           "signal(barrier, 1, device = {x: 1, core: 0})\n"
                           "signal(barrier, 1, core_index = me)\nwait(barrier, 3)"));
  ASSERT_TRUE(r.ok) << r.rendered();
  const AxisDecl *core = r.module->coreAxis();
  ASSERT_NE(core, nullptr);
  EXPECT_TRUE(core->isCore());
  EXPECT_EQ(core->name(), "core");
  EXPECT_EQ(core->size(), std::optional<int64_t>(2));
  // The mesh of devices is the other one; its axes are not core axes.
  ASSERT_NE(r.module->mesh(), nullptr);
  EXPECT_FALSE(r.module->mesh()->axes()[0]->isCore());
  // axis_size(core) is a compile-time constant, as for an axis of devices.
  const auto &n = cast<LetStmt>(*r.module->kernel()->body().stmts()[2]).decl();
  EXPECT_EQ(evalConst(n.init()), std::optional<int64_t>(2));
  // A tuple device id names the axes of devices only (Pallas' MESH device ids): one entry.
  auto tuple = load(coreKernel("signal(barrier, 1, device = (1, 0))"));
  EXPECT_TRUE(tuple.has("device-arity")) << tuple.rendered();
}

TEST(Sema, MeshSizesTheTensorCoreAxis) {
  const std::string text = "param D = 2\nparam C = 2\nmesh device = D\ntensorcore_mesh core = "
                           "C\nkernel k() {}";
  auto r = test::loadMesh(text, {{"device", 3}, {"core", 4}});
  ASSERT_TRUE(r.ok) << r.rendered();
  EXPECT_EQ(r.module->coreAxis()->size(), std::optional<int64_t>(4));
  EXPECT_EQ(*r.module->mesh()->axes()[0]->size(), 3);
  // --mesh names every axis of the file's meshes: the core axis too, and no other.
  auto missing = test::loadMesh(text, {{"device", 3}});
  EXPECT_EQ(missing.ids(), std::vector<std::string>{"mesh-mismatch"}) << missing.rendered();
  auto extra = test::loadMesh(text, {{"device", 3}, {"core", 2}, {"y", 2}});
  EXPECT_TRUE(extra.has("mesh-mismatch")) << extra.rendered();
}

TEST(Sema, ResolvesNamesToDeclarations) {
  auto r = load(kernel("for i in 0 .. H { let j = i + N\n  o[j % 8] = v[0, 0] }"));
  ASSERT_TRUE(r.ok) << r.rendered();
  const auto &loop = cast<ForStmt>(*r.module->kernel()->body().stmts()[1]);
  const auto &let = cast<LetStmt>(*loop.body().stmts()[0]).decl();
  const auto &sum = cast<BinaryExpr>(let.init());
  EXPECT_EQ(cast<NameExpr>(sum.lhs()).decl(), &loop.var());
  EXPECT_EQ(cast<NameExpr>(sum.rhs()).decl(), r.module->params()[0]);
  const auto &store = cast<StoreStmt>(*loop.body().stmts()[1]);
  const auto &target = cast<IndexExpr>(store.target());
  EXPECT_EQ(target.base().decl(), r.module->kernel()->params()[1].get());
  EXPECT_EQ(target.type().kind, TypeKind::Ref);
  EXPECT_EQ(target.type().shape, (std::vector<int64_t>{128}));
  EXPECT_EQ(store.value().type().shape, (std::vector<int64_t>{128}));
}

TEST(Sema, EvaluatesConstants) {
  auto r = load("param N = 4\nconst A = (N * 3 - 1) / 2 % 4\nconst B = -7 / 2\nconst C = -7 % 3\n"
                "mesh x = N\nkernel k() grid(A + 1, A + 1) collective_id(B + 9) {"
                " let n = num_programs(1) + axis_size(x) }",
                {{"N", 8}});
  ASSERT_TRUE(r.ok) << r.rendered();
  auto consts = r.module->consts();
  EXPECT_EQ(consts[0]->value(), 3); // (23 / 2) % 4 = 11 % 4
  EXPECT_EQ(consts[1]->value(), -4);
  EXPECT_EQ(consts[2]->value(), 2);
  EXPECT_EQ(r.module->mesh()->axes()[0]->size(), 8);
  const KernelDecl *k = r.module->kernel();
  EXPECT_EQ(k->gridValues(), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(k->collectiveIdValue(), 5);
  const auto &n = cast<LetStmt>(*k->body().stmts()[0]).decl().init();
  EXPECT_EQ(evalConst(n), 12);
}

TEST(Sema, PerDeviceValuesAreNotConstant) {
  auto r = load(kernel("let me = axis_index(x)\n let p = me + 1\n let c = copy(a[me:me + 2],"
                       " o[H:H + 2], d)"));
  ASSERT_TRUE(r.ok) << r.rendered();
  const auto &p = cast<LetStmt>(*r.module->kernel()->body().stmts()[2]).decl().init();
  EXPECT_FALSE(evalConst(p).has_value());
  // `me : me + 2` has the static extent 2.
  const auto &c =
      cast<CopyExpr>(cast<LetStmt>(*r.module->kernel()->body().stmts()[3]).decl().init());
  EXPECT_EQ(c.src().type().shape, (std::vector<int64_t>{2, 128}));
}

TEST(Sema, ValueExpressions) {
  auto r = load(kernel("v[1] = a * 2.0 + o\n o[:, 0:4] += v[0, :, 4:8] - 1\n o[...] = 0\n"
                       " o[0:4] = a[4:8] * min(a[0:4], 1.5)"));
  EXPECT_TRUE(r.ok) << r.rendered();
  auto bad = load(kernel("o[0:4] = a[0:3]"));
  EXPECT_EQ(bad.ids(), std::vector<std::string>{"shape-mismatch"});
  auto mod = load(kernel("o[0] = a[0] % 2"));
  EXPECT_EQ(mod.ids(), std::vector<std::string>{"type-mismatch"});
}

TEST(Sema, DevicesAndSemaphores) {
  auto r =
      load("mesh x = 2, y = 2\nkernel k(in a: hbm f32[8], out o: hbm f32[8]) collective_id(0) {"
           "\n scratch s: dma_sem[2], t: sem[2, 2]\n"
           " let c = remote_copy(a, o, s[0], s[1], device = {y: 1})\n"
           " let e = remote_copy(a, o, s[0], s[1], device = (1, axis_index(y)))\n"
           " signal(t[0, 1], device = 3)\n wait(t[1, 0])\n signal(barrier, device = {x: 0})\n"
           " wait(barrier, 1)\n let v = read(s[1])\n}\n");
  EXPECT_TRUE(r.ok) << r.rendered();
  auto bad = load("mesh x = 2, y = 2\nkernel k() {\n scratch t: sem[2, 2]\n"
                  " signal(t[0])\n signal(t, device = {z: 1})\n signal(t[0, 0], device = {x: 2})\n"
                  " signal(t[0, 0], device = {x: 1, x: 0})\n}\n");
  EXPECT_EQ(bad.ids(), (std::vector<std::string>{"index-count", "index-count", "unknown-name",
                                                 "device-out-of-range", "device-arity"}))
      << bad.rendered();
}

TEST(Sema, LetsScopesAndShadowing) {
  auto r = load(kernel("if N > 2 { let q = 1 } else { let q = 2 }\n let q = 3"));
  EXPECT_TRUE(r.ok) << r.rendered();
  auto shadow = load(kernel("let q = 1\n if true { let q = 2 }"));
  EXPECT_EQ(shadow.ids(), std::vector<std::string>{"redefinition"});
  auto scope = load(kernel("if true { let q = 1 }\n let z = q"));
  EXPECT_EQ(scope.ids(), std::vector<std::string>{"unknown-name"});
  auto sem = load(kernel("let q = s"));
  EXPECT_EQ(sem.ids(), std::vector<std::string>{"type-mismatch"});
}

TEST(Sema, WaitOnDmaSemaphoreAndDmaOnRegular) {
  EXPECT_EQ(load(kernel("wait(d)")).ids(), std::vector<std::string>{"sem-kind"});
  // A DMA may signal regular semaphores (1 per side on completion, TPU v6+), both of one
  // kind, and is then waited on through them, not through its descriptor.
  EXPECT_TRUE(load(kernel("let c = copy(a, o, s)\n c.start()\n wait(s, 1)")).ids().empty());
  EXPECT_TRUE(load(kernel("let c = remote_copy(a, o, s, s, device = 0)")).ids().empty());
  EXPECT_EQ(load(kernel("let c = remote_copy(a, o, d, s, device = 0)")).ids(),
            std::vector<std::string>{"sem-kind"});
  EXPECT_EQ(load(kernel("let c = remote_copy(a, o, s, d, device = 0)")).ids(),
            std::vector<std::string>{"sem-kind"});
  EXPECT_EQ(load(kernel("let c = copy(a, o, s)\n c.wait()")).ids(),
            std::vector<std::string>{"sem-kind"});
  // Mosaic: no regular semaphores on a DMA that involves SMEM.
  EXPECT_EQ(load(kernel("scratch m: smem f32[8, 128]\n let c = copy(a, m, s)")).ids(),
            std::vector<std::string>{"sem-kind"});
  EXPECT_TRUE(load(kernel("scratch m: smem f32[8, 128]\n let c = copy(a, m, d)")).ids().empty());
  EXPECT_EQ(load(kernel("let c = remote_copy(a, o, s, s, device = 0)\n c.wait_send()")).ids(),
            std::vector<std::string>{"sem-kind"});
  EXPECT_EQ(load(kernel("let c = remote_copy(a, o, s, s, device = 0)\n c.wait_recv()")).ids(),
            std::vector<std::string>{"sem-kind"});
  EXPECT_EQ(load(kernel("let c = copy(a, o, d)\n let e = copy(s, o, d)")).ids(),
            std::vector<std::string>{"type-mismatch"});
  // A descriptor into an 'in' parameter may be made (and waited on): lowering refuses
  // its start (write-to-input, examples/static_start_into_input.dk).
  EXPECT_TRUE(load(kernel("let c = copy(a, a, d)")).ids().empty());
  EXPECT_TRUE(load(kernel("let c = copy(a, a, d)\n c.wait()")).ids().empty());
}

// Descriptor variables (`var`): assigned a descriptor, tested as a condition, waited
// on; anything else is a type error, and arrays need one index per dimension.
TEST(Sema, DescriptorVariables) {
  auto ok = load(kernel("var c, cs[3, 2]\n"
                        " c = copy(a, o, d)\n"
                        " cs[0, 1] = async_remote_copy(a, o, d, r[0], device = 1)\n"
                        " let e = copy(a, o, r[1])\n"
                        " cs[2, 0] = e\n"
                        " cs[1, 1] = cs[0, 1]\n"
                        " for i in 0 .. 3 { if cs[i, 0] and not c { cs[i, 0].wait() } }\n"
                        " if c or cs[1, 1] { c.start() }\n"
                        " cs[0, 1].wait_recv()\n"
                        " let f = async_copy(a, o, d)\n"
                        " f.wait()"));
  EXPECT_TRUE(ok.ok) << ok.rendered();
  EXPECT_EQ(load(kernel("var c\n c = 1")).ids(), std::vector<std::string>{"type-mismatch"});
  EXPECT_EQ(load(kernel("var c\n c = copy(a, o, d)\n c += copy(a, o, d)")).ids(),
            std::vector<std::string>{"type-mismatch"});
  EXPECT_EQ(load(kernel("var c\n let e = c")).ids(), std::vector<std::string>{"type-mismatch"});
  EXPECT_EQ(load(kernel("var c\n let e = c + 1")).ids(), std::vector<std::string>{"type-mismatch"});
  EXPECT_EQ(load(kernel("var cs[2]\n cs.wait()")).ids(), std::vector<std::string>{"index-count"});
  EXPECT_EQ(load(kernel("var cs[2]\n cs = copy(a, o, d)")).ids(),
            std::vector<std::string>{"index-count"});
  EXPECT_EQ(load(kernel("var cs[2]\n if cs { }")).ids(), std::vector<std::string>{"type-mismatch"});
  EXPECT_EQ(load(kernel("var cs[2]\n cs[2] = copy(a, o, d)")).ids(),
            std::vector<std::string>{"out-of-bounds"});
  EXPECT_EQ(load(kernel("var cs[2]\n cs[0:1] = copy(a, o, d)")).ids(),
            std::vector<std::string>{"type-mismatch"});
  EXPECT_EQ(load(kernel("var cs[0]")).ids(), std::vector<std::string>{"invalid-size"});
  EXPECT_EQ(load(kernel("var s")).ids(), std::vector<std::string>{"redefinition"});
  EXPECT_EQ(load(kernel("if true { var c }\n c.wait()")).ids(),
            std::vector<std::string>{"unknown-name"});
  // A descriptor made outside a let or an assignment to a variable.
  EXPECT_EQ(load(kernel("o = copy(a, o, d)")).ids(), std::vector<std::string>{"misplaced-expr"});
}

TEST(Sema, SkipDeviceBarrier) {
  auto ok = load(kernel("", " skip_device_barrier(true)"));
  ASSERT_TRUE(ok.ok) << ok.rendered();
  EXPECT_TRUE(ok.module->kernel()->skipDeviceBarrierValue());
  auto off = load(kernel("", " skip_device_barrier(N < 2)"));
  ASSERT_TRUE(off.ok) << off.rendered();
  EXPECT_FALSE(off.module->kernel()->skipDeviceBarrierValue());
  EXPECT_EQ(load(kernel("", " skip_device_barrier(1)")).ids(),
            std::vector<std::string>{"type-mismatch"});
  EXPECT_EQ(load(kernel("", " skip_device_barrier(axis_index(x) == 0)")).ids(),
            std::vector<std::string>{"not-constant"});
  EXPECT_EQ(load(kernel("", " skip_device_barrier(true) skip_device_barrier(true)")).ids(),
            std::vector<std::string>{"bad-attribute"});
}

TEST(Sema, ParamsFromDefines) {
  auto r = load("param N\nmesh x = N\nkernel k() {}", {{"N", 3}});
  ASSERT_TRUE(r.ok) << r.rendered();
  EXPECT_EQ(r.module->params()[0]->value(), 3);
}

} // namespace
} // namespace dkv::frontend
