// Element types and memory spaces: each defined once, with its `.dk` and Python spellings,
// its size, JAX's type promotion and the value semantics of conversions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace dkv::prim {

/// Element types of buffers and values.
enum class DType : uint8_t { F32, BF16, F16, I32, I16, I8, U8, U32 };

/// One element type: its spellings and representation.
struct DTypeInfo {
  DType id;
  std::string_view dk; ///< `.dk` spelling: `f32`
  /// Python spellings, space-separated, the canonical one first: `jnp.float32 np.float32`.
  std::string_view python;
  int bytes;     ///< size of one element
  bool integer;  ///< an integer type (else a float one)
  bool isSigned; ///< integers: two's complement; floats: true
};

/// Every element type, in the order of `DType`.
std::span<const DTypeInfo> dtypes();
const DTypeInfo &info(DType dtype);
/// `f32`, `bf16`, ...
std::string_view dkName(DType dtype);
/// The canonical Python spelling: `jnp.float32`.
std::string_view pythonName(DType dtype);
/// The type a `.dk` spelling names (`f32`), or nullopt.
std::optional<DType> dtypeFromDk(std::string_view spelling);
/// The type a dotted Python name names (`jnp.float32`, `np.int32`), or nullopt.
std::optional<DType> dtypeFromPython(std::string_view spelling);
int64_t byteSize(DType dtype);
/// An integer element type (i32, i16, i8, u8, u32); else a float one.
bool isInteger(DType dtype);

/// The element type of an operand in JAX's type promotion: a dtype, or the weak type of
/// a Python scalar (`weak`: an int is `{I32, weak}`, a float `{F32, weak}`), which takes
/// the other operand's type where it can (JAX, "Type promotion semantics": `int32_array +
/// 1` is int32, `bf16_array * 2.0` bf16, `2.0 * int32_array` a weak float32).
struct ElemType {
  DType dtype = DType::F32;
  bool weak = false;
  friend bool operator==(const ElemType &, const ElemType &) = default;
};
inline constexpr ElemType kWeakInt{DType::I32, true};
inline constexpr ElemType kWeakFloat{DType::F32, true};

/// The least upper bound of `a` and `b` on JAX's promotion lattice (i* -> u8 / i8,
/// u8 -> u16 -> u32 -> u64, u8 -> i16, u16 -> i32, u32 -> i64, i8 -> i16 -> i32 -> i64,
/// i64 / u64 -> f*, f* -> bf16 / f16 -> f32 -> f64), with 64-bit types canonicalised to
/// 32 bits as JAX does without x64 (so u32 with i32 is i32). Weak iff the bound is i* or f*.
ElemType promote(ElemType a, ElemType b);
/// The type of an operation that gives floats on integers (true division, exp, the
/// activations): an integer type becomes float32 (weakly if it was weak); floats stay.
ElemType toInexact(ElemType t);
/// The result type of jnp.sum: integer types narrower than 32 bits widen to i32 / u32.
ElemType sumType(ElemType t);

/// `value` rounded to `dtype`, as a store into a `dtype` buffer does: f32 and bf16 round
/// to nearest even (f16 is held at f32 precision), integer types truncate toward zero and
/// wrap around (two's complement); non-finite values become 0 in integer types.
double roundTo(double value, DType dtype);
/// `value` rounded to `from`, its bits read as `to` (the same width, neither f16).
double bitcast(double value, DType from, DType to);

/// Memory spaces of buffers.
enum class MemSpace : uint8_t { Hbm, Vmem, Smem, Any };

struct MemSpaceInfo {
  MemSpace id;
  std::string_view dk; ///< `hbm`, `vmem`, `smem`, `any`
  /// Python spellings, space-separated (pltpu., pl., and the old TPUMemorySpace names).
  std::string_view python;
};
std::span<const MemSpaceInfo> memSpaces();
const MemSpaceInfo &info(MemSpace space);
std::string_view dkName(MemSpace space);
std::optional<MemSpace> memSpaceFromDk(std::string_view spelling);
std::optional<MemSpace> memSpaceFromPython(std::string_view spelling);

/// The `.dk` spellings (for diagnostics and printers; found by ADL from every layer).
inline std::string_view toString(DType dtype) { return dkName(dtype); }
inline std::string_view toString(MemSpace space) { return dkName(space); }

/// True if `word` is one of the space-separated words of `list`.
bool listHas(std::string_view list, std::string_view word);

} // namespace dkv::prim
