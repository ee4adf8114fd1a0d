// The objects of the Pallas / JAX API that the tracer models: meshes, partition specs,
// block and grid specs, compiler parameters, the callables shard_map, pallas_call and
// pl.kernel make, scratch types, dtypes, ... Each is a struct with named parts; an
// ApiObject holds one of them.
#pragma once

#include "frontend/AST.h"
#include "pytrace/Re.h"
#include "pytrace/TpuChips.h"
#include "pytrace/Value.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace dkv::pytrace {

/// What a DTypeObj is in Python: a NumPy dtype instance (`np.dtype('int32')`, `x.dtype`),
/// NumPy's scalar type (`np.int32`, a class), JAX's scalar type (`jnp.int32`, a class of
/// metaclass `_ScalarMeta`), or not known (the default: isinstance and repr refuse it).
enum class DTypeForm : uint8_t { Unknown, Dtype, NumpyType, JnpType };
/// `jnp.float32`, `np.int32`, ...: an element type; `dtype` is empty for one dkv does
/// not model (float64, bool, ...), which is an error only where a kernel needs it.
struct DTypeObj {
  std::optional<ast::DType> dtype;
  std::string name; ///< numpy's name: "float32", "bfloat16", ...
  DTypeForm form = DTypeForm::Unknown;
};
/// An abstract scalar type of NumPy's hierarchy (`jnp.floating`, `np.integer`,
/// `jnp.number`, ...: jnp's are NumPy's), which `jnp.issubdtype` tests against.
struct DTypeKindObj {
  std::string name; ///< "floating", "integer", "signedinteger", ...
};
/// `pltpu.VMEM`, `pltpu.ANY`, ... (callable as a scratch type: `pltpu.VMEM(shape, dtype)`).
struct MemSpaceObj {
  ast::MemSpace space;
  std::string name;
  /// `pltpu.SEMAPHORE`: the memory of semaphores (a pallas_call operand or output that is
  /// a semaphore array; `space` is unused).
  bool semaphore = false;
};
/// `pltpu.SemaphoreType.DMA` / `.REGULAR` (callable with a shape: an array of them).
struct SemTypeObj {
  ast::SemKind kind;
};
/// `pltpu.DeviceIdType.MESH` / `.LOGICAL`.
struct DeviceIdTypeObj {
  bool logical = false;
};
/// A member of `pltpu.CoreType` (`TC`, `SC_SCALAR_SUBCORE`, `SC_VECTOR_SUBCORE`): an
/// enum value, compared by identity as Python compares enum members.
struct CoreTypeObj {
  std::string name;
};
/// The members of `jax.sharding.AxisType` (jax/_src/mesh.py), in their order there.
enum class AxisKind { Auto, Explicit, Manual };
/// A member of `jax.sharding.AxisType`, compared by its kind.
struct AxisTypeObj {
  AxisKind kind;
};
/// A device mesh (`jax.make_mesh`, `jax.sharding.Mesh`): axis names and sizes.
struct MeshObj {
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  /// One AxisType per axis where the file states or JAX defaults them (jax.make_mesh:
  /// Explicit, jax.sharding.Mesh and jtu.create_mesh: Auto); empty where dkv does not
  /// know them (the one-device mesh of a pallas_call outside shard_map, an entry's).
  std::vector<AxisKind> axisTypes;
  /// The ids of its devices in row-major order where the file states them
  /// (`Mesh(np.array(jax.devices()).reshape(...), ...)`); empty where their order is a
  /// fact of the TPU's topology (`jax.make_mesh`, `create_device_mesh`) or unknown.
  std::vector<int64_t> deviceIds;
  /// Every axis is known to be `AxisType.Explicit`.
  bool explicitAxes() const;
  int64_t devices() const;
};
/// An array of devices of a known shape (`mesh_utils.create_device_mesh`,
/// `np.array(jax.devices()).reshape(...)`, `jax.devices()[:n]` as an array).
struct DeviceArrayObj {
  std::vector<int64_t> shape;
  /// The ids of its devices in row-major order, or empty where their order is not
  /// known (`create_device_mesh` and `jax.make_mesh` order devices by the chips'
  /// topology).
  std::vector<int64_t> ids;
};
/// One device (`jax.devices()[i]`).
struct DeviceObj {
  /// Its id, or -1 for a device of an array whose order dkv does not know.
  int64_t id = 0;
};
/// `P(...)`: one entry per dimension (None, an axis name, or a tuple of names).
struct PSpecObj {
  std::vector<V> entries;
};
struct NamedShardingObj {
  V mesh, spec;
};
/// `pl.BlockSpec(block_shape, index_map, memory_space=..., pipeline_mode=...)`. A blocked
/// spec (a block shape or an index map) is read by `pltpu.emit_pipeline` (Pipeline.cpp);
/// a pallas_call operand takes only the memory space.
struct BlockSpecObj {
  std::optional<ast::MemSpace> space;
  V blockShape, indexMap, pipelineMode; ///< null when not given (or None)
  support::SourceRange range;           ///< the BlockSpec(...) call
  bool semaphore = false;               ///< memory_space=pltpu.SEMAPHORE
  bool blocked() const { return blockShape || indexMap; }
};
/// `pltpu.PrefetchScalarGridSpec` / `pl.GridSpec`.
struct GridSpecObj {
  V grid, inSpecs, outSpecs, scratchShapes; ///< null when not given
  int64_t numScalarPrefetch = 0;
};
struct CompilerParamsObj {
  std::optional<int64_t> collectiveId;
  bool skipDeviceBarrier = false;
  V dimensionSemantics;             ///< as given (a sequence), or null
  support::SourceRange semanticsAt; ///< the CompilerParams(...) call
};
/// `shard_map(f, mesh=..., in_specs=..., out_specs=...)`.
struct ShardMapObj {
  V f, mesh, inSpecs, outSpecs;
};
/// `pl.pallas_call(kernel, ...)`: the callable it returns.
struct PallasCallObj {
  V kernel, outShape, gridSpec, grid, inSpecs, outSpecs, scratchShapes, compilerParams;
  V aliases; ///< input_output_aliases: a dict {input index: output index}, or null
};
/// `pl.kernel(body, out_type=..., mesh=..., ...)`.
struct PlKernelObj {
  V body, outType, mesh, scratchTypes, compilerParams;
};
/// A ref made on the host by `pl.run_state(f)(init)` (one per leaf of `init`) or
/// `jax.new_ref(x)`: a mutable array in the device's HBM, the operand of a `pl.core_map`
/// kernel whose body closes over it (pytrace/CoreMap.cpp).
struct StateRefObj {
  V array;              ///< a HostArrayV: its shape and element type
  uint64_t serial = 0;  ///< creation order: the order of a kernel's parameters
  std::string maker;    ///< "pl.run_state" or "jax.new_ref", for messages
  bool live = true;     ///< false once its pl.run_state returned
  int kernels = 0;      ///< the kernels that took it as instances of their own
  int sequenceUses = 0; ///< the kernels of sequences that took it (one sequence: sequences())
};
/// `pltpu.VMEM((8, 128), jnp.float32)`: a scratch buffer type.
struct ScratchObj {
  ast::MemSpace space;
  V shape, dtype;
};
/// `pltpu.SemaphoreType.DMA((2,))`: an array of semaphores.
struct SemArrayObj {
  ast::SemKind kind;
  V shape;
};
/// A semaphore array that a pallas_call returned (an output with a semaphore
/// `out_shape`, `pltpu.SemaphoreType.REGULAR(())`): the caller's, passed to a later
/// pallas_call of the same shard_map body as a `pltpu.SEMAPHORE` operand. Each is one
/// array, told apart by identity (docs/python.md "Kernel sequences").
struct HeldSemObj {
  ast::SemKind kind;
  std::vector<int64_t> dims;
};
/// `pltpu.emit_pipeline(body, grid=..., in_specs=..., out_specs=...)`: the callable it
/// returns; calling it on refs traces the pipeline (Pipeline.cpp).
struct PipelineObj {
  V body, grid, inSpecs, outSpecs;
  support::SourceRange range;
};
/// `pl.ds(start, size)`.
struct DSliceObj {
  V start, size;
};
/// `pl.when(cond)`: a decorator.
struct WhenObj {
  V cond;
};
/// `pl.loop(lo, hi, init_carry=...)`: a decorator.
struct LoopObj {
  V lo, hi, init; ///< init: NoneV without a carry
};
/// `jax.named_scope(name)`: a context manager and decorator that does nothing dkv sees.
struct NamedScopeObj {};
/// `pltpu.create_tensorcore_mesh(axis, num_cores=N)`, and `plsc.ScalarSubcoreMesh(
/// axis_name=..., num_cores=N)` (`sparse`): a mesh of the cores of one device, each running
/// the kernel's body (docs/python.md "TensorCores", "SparseCores").
struct TcMeshObj {
  std::string axis; ///< its name in the kernel language
  int64_t cores = 1;
  V name;              ///< the axis name the file gave (a str, or a tuple of them)
  bool named = true;   ///< whether Python code names it by the string `axis` (a str name)
  bool sparse = false; ///< a ScalarSubcoreMesh: its cores are the scalar subcores of SparseCores
};
/// `np.random.default_rng(seed)`: a NumPy Generator, whose draws dkv keeps as shapes.
struct NpRngObj {};
/// `jax.tree_util.tree_flatten(tree)[1]`: the tree's structure (the tree itself, its
/// leaves standing for the slots) and its leaf count.
struct TreeDefObj {
  V tree;
  V isLeaf;
  int64_t leaves = 0;
};
/// `np.iinfo(t)` / `np.finfo(t)` (and jnp's, the same objects): the limits of a type.
struct DTypeLimitsObj {
  ast::DType dtype = ast::DType::I32;
  bool x64 = false; ///< NumPy's int64 / float64 (HostArrayV::x64)
};
/// `pltpu.get_tpu_info()` of the chip `--tpu` names (pytrace/TpuChips.h).
struct TpuInfoObj {
  const TpuChip *chip = nullptr;
};
/// `pltpu.get_tpu_info().chip_version`: tpu_info.py's ChipVersion member of the chip.
struct ChipVersionObj {
  const TpuChip *chip = nullptr;
};
/// `pltpu.get_tpu_info().sparse_core` (and `plsc.get_sparse_core_info()`): the
/// SparseCoreInfo of the chip `--tpu` names, one with SparseCores.
struct SparseCoreObj {
  const TpuChip *chip = nullptr;
};
/// `ref.at`: indexing it makes a view.
struct AtObj {
  V ref;
};
/// `jax.jit(f)`: calls f; its other attributes (`.lower`, `.trace`) are opaque.
struct JitObj {
  V fn;
  bool named = false; ///< jax.named_call: a name for profiles, not a jitted computation
  /// static_argnums / static_argnames given: which arguments JAX traces is not known, so
  /// every argument is passed as it is.
  bool staticArgs = false;
};
/// `jax.custom_vjp(fun)` / `jax.custom_jvp(fun)`: a call is a call of `fun` (the forward
/// pass, what a caller that does not differentiate runs); `defvjp` / `defjvp` record rules
/// that only differentiation uses.
struct CustomDerivObj {
  V fn;
  bool vjp = true;
};
/// `checkify.checkify(f)`: a call calls f and returns `(error, result)`, the error opaque
/// (dkv does not model JAX's run-time checks).
struct CheckifyObj {
  V fn;
};
/// `jitted.lower(...)` (and its `.compile()`): the lowered (compiled) computation of a
/// jitted function, whose HLO dkv does not compute; lowering runs no kernel.
struct LoweredObj {
  std::string name; ///< the jitted function's name
  bool compiled = false;
};
/// `# dkv: set NAME()=VALUE`: a function of any arguments, giving one value (the
/// arguments are evaluated by the caller, as for any call, and not used).
struct DirectiveConstObj {
  std::string name;
  V value;
  /// `set NAME()=EXPR`: the expression each call evaluates in `globals` (null: `value`).
  const py::Expr *expr = nullptr;
  ModuleP globals;
};
/// A test method under `parameterized.parameters` / `named_parameters` / `product`:
/// its cases, each a label (absl's: the index, or the name of a named case) and the
/// arguments.
struct ParameterizedObj {
  V fn;
  struct Case {
    std::string label;
    std::string absltestName; ///< the method name absl generates
    Args args;
  };
  std::vector<Case> cases;
};
/// A strategy of `hypothesis.strategies` (Hypothesis.cpp, docs/python.md "Hypothesis").
struct StrategyObj {
  enum class K {
    SampledFrom,
    Booleans,
    Just,
    Integers,
    Tuples,
    Lists,
    OneOf,
    Composite,
    Map,
    Filter
  };
  K k = K::Just;
  std::vector<V> items;   ///< sampled_from's values; tuples' / one_of's strategies; lists' element
  V value;                ///< just's value; map's / filter's / composite's function
  V inner;                ///< map's / filter's strategy
  Args args;              ///< a composite's arguments after `draw`
  int64_t lo = 0, hi = 0; ///< integers' bounds; lists' sizes
  std::string text;       ///< its repr (`integers(0, 4)`)
  /// Why dkv cannot draw from it (an unbounded range), refused where it is drawn: a test
  /// that uses it stops there, the file's other tests run.
  std::string refusal;
  support::SourceRange at; ///< the call that made it
};
/// `@hypothesis.strategies.composite` applied to a function: calling it makes a strategy.
struct CompositeObj {
  V fn;
};
/// The `draw` a composite function gets: valid while dkv draws an example.
struct DrawObj {};
/// `hypothesis.settings(max_examples=N, ...)`: a decorator of a test.
struct SettingsObj {
  std::optional<int64_t> maxExamples;
};
/// `hypothesis.given(...)` before it is applied (`fn` null), and the test it makes: its
/// strategies, positional (the rightmost parameters) or by keyword.
struct GivenObj {
  V fn;
  std::vector<V> pos;
  std::vector<std::pair<std::string, V>> kw;
  std::optional<int64_t> maxExamples; ///< `@settings(max_examples=N)` on the test
};
/// `self.assertRaises(E)` / `assertRaisesRegex(E, ...)` as a context manager.
struct AssertRaisesObj {
  V exceptionClass;
  support::SourceRange range;
};
/// `unittest.skipIf(cond, reason)` and kin: a decorator marking a test skipped.
struct SkipDecoratorObj {
  bool skip = false;
  std::string reason;
};

/// `dataclasses.field(default=..., default_factory=..., init=...)`.
struct FieldObj {
  V dflt, factory;
  bool init = true;
  std::string name; ///< dataclasses.fields(): the field's name (empty for field())
};
/// `super()` / `super(C, obj)`: attribute lookup starts after `start` in obj's MRO.
struct SuperObj {
  ClassP start;
  V self;
};
/// `enum.auto()`.
struct AutoObj {};
/// `d.keys()`, `d.values()`, `d.items()`: live views of a dict.
struct DictViewObj {
  V dict;
  enum class What { Keys, Values, Items } what = What::Keys;
};

using ApiData =
    std::variant<DTypeObj, DTypeKindObj, MemSpaceObj, SemTypeObj, DeviceIdTypeObj, CoreTypeObj,
                 AxisTypeObj, MeshObj, DeviceArrayObj, DeviceObj, PSpecObj, NamedShardingObj,
                 BlockSpecObj, GridSpecObj, CompilerParamsObj, ShardMapObj, PallasCallObj,
                 PlKernelObj, ScratchObj, SemArrayObj, HeldSemObj, PipelineObj, DSliceObj, WhenObj,
                 LoopObj, NamedScopeObj, TcMeshObj, AtObj, JitObj, LoweredObj, CustomDerivObj,
                 CheckifyObj, DirectiveConstObj, ParameterizedObj, AssertRaisesObj,
                 SkipDecoratorObj, FieldObj, StrategyObj, CompositeObj, DrawObj, SettingsObj,
                 GivenObj, SuperObj, AutoObj, DictViewObj, RePatternObj, ReMatchObj, TpuInfoObj,
                 SparseCoreObj, StateRefObj, NpRngObj, ChipVersionObj, DTypeLimitsObj, TreeDefObj>;

struct ApiObject final : Value {
  static constexpr Kind kKind = Kind::Api;
  explicit ApiObject(ApiData data) : Value(kKind), data(std::move(data)) {}
  ApiData data;
};

/// The API object of type T that `v` is, or null.
template <typename T> T *apiAs(const V &v) {
  auto *a = dynCast<ApiObject>(v);
  return a ? std::get_if<T>(&a->data) : nullptr;
}
template <typename T> V makeApi(T data) {
  return std::make_shared<ApiObject>(ApiData(std::move(data)));
}

/// The Python type name of an API object, for messages ("Mesh", "PartitionSpec", ...).
std::string apiTypeName(const ApiObject &a);
/// The name of an AxisType member ("Auto", "Explicit", "Manual").
const char *axisKindName(AxisKind k);

} // namespace dkv::pytrace
