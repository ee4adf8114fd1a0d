// The overload set for std::visit: every alternative is handled by its own lambda,
// so a visit without a catch-all fails to compile when a variant gains a kind.
#pragma once

namespace dkv::support {

template <class... Ts> struct Overloaded : Ts... { using Ts::operator()...; };
template <class... Ts> Overloaded(Ts...) -> Overloaded<Ts...>;

} // namespace dkv::support
