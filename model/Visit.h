// Overload sets for std::visit over the model's variants (EventKind).
#pragma once

namespace dkv::model {

/// `std::visit(Overloaded{[](const KernelEnter &) {...}, ...}, event.kind)`: list every
/// alternative and no catch-all (no `auto` parameter), so that adding an event kind
/// fails to compile wherever it is not handled.
template <class... Ts> struct Overloaded : Ts... { using Ts::operator()...; };
template <class... Ts> Overloaded(Ts...) -> Overloaded<Ts...>;

} // namespace dkv::model
