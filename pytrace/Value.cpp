// Names of the tracer's value classes, for messages.
#include "pytrace/Value.h"
#include "pytrace/ApiObjects.h"

#include <algorithm>

#include <fmt/format.h>

namespace dkv::pytrace {

std::string typeName(const Value &v) {
  switch (v.kind) {
  case Kind::None:
    return "NoneType";
  case Kind::Bool:
    return "bool";
  case Kind::Int:
    return "int";
  case Kind::Float:
    return "float";
  case Kind::Str:
    return "str";
  case Kind::Tuple:
    if (const auto &cls = static_cast<const TupleV &>(v).cls)
      return cls->name;
    return "tuple";
  case Kind::List:
    return "list";
  case Kind::Dict:
    return "dict";
  case Kind::Set:
    return static_cast<const SetV &>(v).frozen ? "frozenset" : "set";
  case Kind::Slice:
    return "slice";
  case Kind::Ellipsis:
    return "ellipsis";
  case Kind::Range:
    return "range";
  case Kind::Iterator:
    return static_cast<const IteratorV &>(v).typeName;
  case Kind::Function:
    return "function";
  case Kind::BoundMethod:
    return "method";
  case Kind::Builtin:
    return "builtin_function_or_method";
  case Kind::Partial:
    return "functools.partial";
  case Kind::Class:
    return "type";
  case Kind::Instance:
    return static_cast<const InstanceV &>(v).cls->name;
  case Kind::Module:
    return "module";
  case Kind::Wrapper:
    switch (static_cast<const WrapperV &>(v).w) {
    case WrapperV::W::Property:
      return "property";
    case WrapperV::W::StaticMethod:
      return "staticmethod";
    case WrapperV::W::ClassMethod:
      return "classmethod";
    case WrapperV::W::LruCache:
      return "functools._lru_cache_wrapper";
    }
    return "property";
  case Kind::Opaque:
    return "value dkv does not compute";
  case Kind::Traced:
    return static_cast<const TracedV &>(v).tk == TKind::Value ? "traced array" : "traced scalar";
  case Kind::Ref:
    return "Ref";
  case Kind::Sem:
    return "semaphore";
  case Kind::Desc:
    return "AsyncCopyDescriptor";
  case Kind::HostArray:
    return static_cast<const HostArrayV &>(v).isStruct ? "ShapeDtypeStruct"
           : static_cast<const HostArrayV &>(v).numpy  ? "ndarray"
                                                       : "ArrayImpl";
  case Kind::Api:
    return apiTypeName(static_cast<const ApiObject &>(v));
  }
  return "object";
}

std::string apiTypeName(const ApiObject &a) {
  struct Names {
    std::string operator()(const DTypeObj &d) {
      return d.form == DTypeForm::NumpyType ? "type"
             : d.form == DTypeForm::JnpType ? "_ScalarMeta"
                                            : "dtype";
    }
    std::string operator()(const DTypeKindObj &) { return "type"; }
    std::string operator()(const MemSpaceObj &) { return "MemorySpace"; }
    std::string operator()(const SemTypeObj &) { return "SemaphoreType"; }
    std::string operator()(const DeviceIdTypeObj &) { return "DeviceIdType"; }
    std::string operator()(const CoreTypeObj &) { return "CoreType"; }
    std::string operator()(const AxisTypeObj &) { return "AxisType"; }
    std::string operator()(const MeshObj &) { return "Mesh"; }
    std::string operator()(const DeviceArrayObj &) { return "ndarray"; }
    std::string operator()(const DeviceObj &) { return "Device"; }
    std::string operator()(const PSpecObj &) { return "PartitionSpec"; }
    std::string operator()(const NamedShardingObj &) { return "NamedSharding"; }
    std::string operator()(const BlockSpecObj &) { return "BlockSpec"; }
    std::string operator()(const GridSpecObj &) { return "GridSpec"; }
    std::string operator()(const CompilerParamsObj &) { return "CompilerParams"; }
    std::string operator()(const ShardMapObj &) { return "shard_map"; }
    std::string operator()(const PallasCallObj &) { return "pallas_call"; }
    std::string operator()(const PlKernelObj &) { return "pl.kernel"; }
    std::string operator()(const ScratchObj &) { return "MemoryRef"; }
    std::string operator()(const StateRefObj &) { return "Ref"; }
    std::string operator()(const SemArrayObj &) { return "SemaphoreType"; }
    std::string operator()(const HeldSemObj &) { return "ArrayImpl"; }
    std::string operator()(const PipelineObj &) { return "function"; }
    std::string operator()(const DSliceObj &) { return "Slice"; }
    std::string operator()(const WhenObj &) { return "pl.when"; }
    std::string operator()(const LoopObj &) { return "pl.loop"; }
    std::string operator()(const NamedScopeObj &) { return "named_scope"; }
    std::string operator()(const TcMeshObj &t) {
      return t.sparse ? "ScalarSubcoreMesh" : "TensorCoreMesh";
    }
    std::string operator()(const AtObj &) { return "RefIndexer"; }
    std::string operator()(const JitObj &) { return "PjitFunction"; }
    std::string operator()(const LoweredObj &l) { return l.compiled ? "Compiled" : "Lowered"; }
    std::string operator()(const CheckifyObj &) { return "function"; }
    std::string operator()(const CustomDerivObj &c) { return c.vjp ? "custom_vjp" : "custom_jvp"; }
    std::string operator()(const DirectiveConstObj &) { return "function"; }
    std::string operator()(const ParameterizedObj &) { return "_ParameterizedTestIter"; }
    std::string operator()(const AssertRaisesObj &) { return "_AssertRaisesContext"; }
    std::string operator()(const SkipDecoratorObj &) { return "function"; }
    std::string operator()(const FieldObj &) { return "Field"; }
    std::string operator()(const StrategyObj &) { return "SearchStrategy"; }
    std::string operator()(const CompositeObj &) { return "function"; }
    std::string operator()(const DrawObj &) { return "function"; }
    std::string operator()(const SettingsObj &) { return "settings"; }
    std::string operator()(const GivenObj &) { return "function"; }
    std::string operator()(const SuperObj &) { return "super"; }
    std::string operator()(const AutoObj &) { return "auto"; }
    std::string operator()(const RePatternObj &) { return "Pattern"; }
    std::string operator()(const ReMatchObj &) { return "Match"; }
    std::string operator()(const TpuInfoObj &) { return "TpuInfo"; }
    std::string operator()(const TreeDefObj &) { return "PyTreeDef"; }
    std::string operator()(const DTypeLimitsObj &l) {
      return ast::isInteger(l.dtype) ? "iinfo" : "finfo";
    }
    std::string operator()(const ChipVersionObj &) { return "ChipVersion"; }
    std::string operator()(const NpRngObj &) { return "Generator"; }
    std::string operator()(const SparseCoreObj &) { return "SparseCoreInfo"; }
    std::string operator()(const DictViewObj &d) {
      return d.what == DictViewObj::What::Keys     ? "dict_keys"
             : d.what == DictViewObj::What::Values ? "dict_values"
                                                   : "dict_items";
    }
  };
  return std::visit(Names{}, a.data);
}

const char *axisKindName(AxisKind k) {
  switch (k) {
  case AxisKind::Auto:
    return "Auto";
  case AxisKind::Explicit:
    return "Explicit";
  case AxisKind::Manual:
    return "Manual";
  }
  return "Auto";
}

bool MeshObj::explicitAxes() const {
  return !axisTypes.empty() && std::all_of(axisTypes.begin(), axisTypes.end(),
                                           [](AxisKind k) { return k == AxisKind::Explicit; });
}

int64_t MeshObj::devices() const {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  return n;
}

} // namespace dkv::pytrace
