// The element-type and memory-space tables, JAX's promotion lattice and conversions.
#include "prim/DType.h"

#include "support/Invariant.h"

#include <array>
#include <cmath>
#include <cstring>

namespace dkv::prim {

namespace {

constexpr DTypeInfo kDTypes[] = {
    {DType::F32, "f32", "jnp.float32 np.float32", 4, false, true},
    {DType::BF16, "bf16", "jnp.bfloat16", 2, false, true},
    {DType::F16, "f16", "jnp.float16 np.float16", 2, false, true},
    {DType::I32, "i32", "jnp.int32 np.int32", 4, true, true},
    {DType::I16, "i16", "jnp.int16 np.int16", 2, true, true},
    {DType::I8, "i8", "jnp.int8 np.int8", 1, true, true},
    {DType::U8, "u8", "jnp.uint8 np.uint8", 1, true, false},
    {DType::U32, "u32", "jnp.uint32 np.uint32", 4, true, false},
};

constexpr MemSpaceInfo kMemSpaces[] = {
    {MemSpace::Hbm, "hbm", "pltpu.HBM pltpu.MemorySpace.HBM"},
    {MemSpace::Vmem, "vmem", "pltpu.VMEM pltpu.TPUMemorySpace.VMEM pltpu.MemorySpace.VMEM"},
    {MemSpace::Smem, "smem", "pltpu.SMEM pltpu.TPUMemorySpace.SMEM pltpu.MemorySpace.SMEM"},
    {MemSpace::Any, "any", "pltpu.ANY pl.ANY pltpu.TPUMemorySpace.ANY pltpu.MemorySpace.ANY"},
};

template <typename Table> constexpr bool inOrder(const Table &table) {
  for (size_t i = 0; i < std::size(table); ++i)
    if (static_cast<size_t>(table[i].id) != i)
      return false;
  return true;
}
static_assert(inOrder(kDTypes), "kDTypes follows the order of DType");
static_assert(inOrder(kMemSpaces), "kMemSpaces follows the order of MemSpace");

// JAX's promotion lattice ("Type promotion semantics" in the JAX documentation), the
// nodes for the types dkv has plus those a join passes through.
enum Node { IW, FW, U8n, U16n, U32n, U64n, I8n, I16n, I32n, I64n, BF16n, F16n, F32n, F64n, kNodes };
constexpr std::pair<Node, Node> kEdges[] = {
    {IW, U8n},    {IW, I8n},    {U8n, U16n}, {U16n, U32n},  {U32n, U64n}, {U8n, I16n},
    {U16n, I32n}, {U32n, I64n}, {I8n, I16n}, {I16n, I32n},  {I32n, I64n}, {I64n, FW},
    {U64n, FW},   {FW, BF16n},  {FW, F16n},  {BF16n, F32n}, {F16n, F32n}, {F32n, F64n},
};

// above[n]: the nodes at or above n (bit i: node i).
std::array<uint32_t, kNodes> upperBounds() {
  std::array<uint32_t, kNodes> above{};
  for (int n = 0; n < kNodes; ++n)
    above[n] = 1u << n;
  for (bool changed = true; changed;) {
    changed = false;
    for (auto [from, to] : kEdges) {
      uint32_t next = above[from] | above[to];
      if (next != above[from])
        above[from] = next, changed = true;
    }
  }
  return above;
}

Node nodeOf(ElemType t) {
  if (t.weak && t.dtype == DType::I32)
    return IW;
  if (t.weak && t.dtype == DType::F32)
    return FW;
  switch (t.dtype) {
  case DType::F32:
    return F32n;
  case DType::BF16:
    return BF16n;
  case DType::F16:
    return F16n;
  case DType::I32:
    return I32n;
  case DType::I16:
    return I16n;
  case DType::I8:
    return I8n;
  case DType::U8:
    return U8n;
  case DType::U32:
    return U32n;
  }
  DKV_UNREACHABLE("dtype");
}

ElemType typeOf(Node n) {
  switch (n) {
  case IW:
    return kWeakInt;
  case FW:
    return kWeakFloat;
  case U8n:
    return {DType::U8};
  case U16n: // not a dkv type; no join of dkv types ends here
  case U32n:
  case U64n: // 64-bit types are canonicalised to 32 bits (JAX without x64)
    return {DType::U32};
  case I8n:
    return {DType::I8};
  case I16n:
    return {DType::I16};
  case I32n:
  case I64n:
    return {DType::I32};
  case BF16n:
    return {DType::BF16};
  case F16n:
    return {DType::F16};
  case F32n:
  case F64n:
    return {DType::F32};
  case kNodes:
    break;
  }
  DKV_UNREACHABLE("lattice node");
}

double wrap(double value, int bits, bool isSigned) {
  if (!std::isfinite(value))
    return 0;
  double t = std::trunc(value);
  const double range = std::ldexp(1.0, bits);
  double m = std::fmod(t, range);
  if (m < 0)
    m += range;
  if (isSigned && m >= range / 2)
    m -= range;
  return m;
}

// The bits of `value` held in `type` (a non-f16 type of at most 32 bits).
uint32_t bitsOf(double value, DType type) {
  switch (type) {
  case DType::F32:
  case DType::BF16: {
    float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return type == DType::F32 ? bits : bits >> 16;
  }
  case DType::I32:
    return static_cast<uint32_t>(static_cast<int32_t>(value));
  case DType::U32:
    return static_cast<uint32_t>(value);
  case DType::I16:
    return static_cast<uint16_t>(static_cast<int16_t>(value));
  case DType::I8:
    return static_cast<uint8_t>(static_cast<int8_t>(value));
  case DType::U8:
    return static_cast<uint8_t>(value);
  case DType::F16:
    break;
  }
  return 0;
}

double fromBits(uint32_t bits, DType type) {
  switch (type) {
  case DType::F32:
  case DType::BF16: {
    if (type == DType::BF16)
      bits <<= 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return static_cast<double>(f);
  }
  case DType::I32:
    return static_cast<double>(static_cast<int32_t>(bits));
  case DType::U32:
    return static_cast<double>(bits);
  case DType::I16:
    return static_cast<double>(static_cast<int16_t>(static_cast<uint16_t>(bits)));
  case DType::I8:
    return static_cast<double>(static_cast<int8_t>(static_cast<uint8_t>(bits)));
  case DType::U8:
    return static_cast<double>(static_cast<uint8_t>(bits));
  case DType::F16:
    break;
  }
  return 0;
}

} // namespace

bool listHas(std::string_view list, std::string_view word) {
  while (!list.empty()) {
    size_t end = list.find(' ');
    if (list.substr(0, end) == word)
      return true;
    if (end == std::string_view::npos)
      break;
    list.remove_prefix(end + 1);
  }
  return false;
}

std::span<const DTypeInfo> dtypes() { return kDTypes; }
const DTypeInfo &info(DType dtype) { return kDTypes[static_cast<size_t>(dtype)]; }
std::string_view dkName(DType dtype) { return info(dtype).dk; }
std::string_view pythonName(DType dtype) {
  std::string_view p = info(dtype).python;
  return p.substr(0, p.find(' '));
}
std::optional<DType> dtypeFromDk(std::string_view spelling) {
  for (const DTypeInfo &d : kDTypes)
    if (d.dk == spelling)
      return d.id;
  return std::nullopt;
}
std::optional<DType> dtypeFromPython(std::string_view spelling) {
  for (const DTypeInfo &d : kDTypes)
    if (listHas(d.python, spelling))
      return d.id;
  return std::nullopt;
}
int64_t byteSize(DType dtype) { return info(dtype).bytes; }
bool isInteger(DType dtype) { return info(dtype).integer; }

ElemType promote(ElemType a, ElemType b) {
  static const std::array<uint32_t, kNodes> above = upperBounds();
  const uint32_t common = above[nodeOf(a)] & above[nodeOf(b)];
  // The least common upper bound: the one whose own upper bounds hold all the others.
  for (int n = 0; n < kNodes; ++n)
    if ((common >> n & 1u) && (above[n] & common) == common)
      return typeOf(static_cast<Node>(n));
  DKV_UNREACHABLE("the promotion lattice has a join for every pair");
}

ElemType toInexact(ElemType t) {
  if (!isInteger(t.dtype))
    return t;
  return t.weak ? kWeakFloat : ElemType{DType::F32};
}

ElemType sumType(ElemType t) {
  switch (t.dtype) {
  case DType::I16:
  case DType::I8:
    return {DType::I32};
  case DType::U8:
    return {DType::U32};
  default:
    return t;
  }
}

double roundTo(double value, DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::F16: // f16 is held at f32 precision (rounding not modelled)
    return static_cast<double>(static_cast<float>(value));
  case DType::BF16: {
    float f = static_cast<float>(value);
    if (std::isnan(f))
      return value;
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    // Round to nearest even on the upper 16 bits.
    uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
    bits = (bits + rounding) & 0xffff0000u;
    std::memcpy(&f, &bits, sizeof f);
    return static_cast<double>(f);
  }
  case DType::I32:
  case DType::I16:
  case DType::I8:
  case DType::U8:
  case DType::U32:
    return wrap(value, info(dtype).bytes * 8, info(dtype).isSigned);
  }
  return value;
}

double bitcast(double value, DType from, DType to) {
  return fromBits(bitsOf(roundTo(value, from), from), to);
}

std::span<const MemSpaceInfo> memSpaces() { return kMemSpaces; }
const MemSpaceInfo &info(MemSpace space) { return kMemSpaces[static_cast<size_t>(space)]; }
std::string_view dkName(MemSpace space) { return info(space).dk; }
std::optional<MemSpace> memSpaceFromDk(std::string_view spelling) {
  for (const MemSpaceInfo &m : kMemSpaces)
    if (m.dk == spelling)
      return m.id;
  return std::nullopt;
}
std::optional<MemSpace> memSpaceFromPython(std::string_view spelling) {
  for (const MemSpaceInfo &m : kMemSpaces)
    if (listHas(m.python, spelling))
      return m.id;
  return std::nullopt;
}

} // namespace dkv::prim
