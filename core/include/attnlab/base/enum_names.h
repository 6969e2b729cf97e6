// enum_names.h: one list of spellings per enum, and the one generic function pair that prints
// and parses them. Each enum that has words (in scenario files, on the command line, in
// scripts) declares beside itself
//
//   inline constexpr EnumName<MaskKind> kMaskKinds[] = {{MaskKind::kNone, "none"}, ...};
//   constexpr const auto& AllNames(MaskKind) { return kMaskKinds; }
//
// and Name(v), ParseName<E>(text) and NameList<E>() work for it; nothing else spells its values.
// The list's order is the order every message and menu lists them in.
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace attnlab {

/// One value of an enum and its spelling ("causal", "softmax_naive").
template <typename E>
struct EnumName {
  E value;
  const char* name;
};

/// An enum with a spelling list: AllNames(E{}) names its list (found by argument lookup).
template <typename E>
concept NamedEnum = requires {
  AllNames(E{});
};

/// The spelling of `v`, or "" for a value outside its enum's list (a cast out of range).
template <NamedEnum E>
constexpr const char* Name(E v) {
  for (const EnumName<E>& n : AllNames(E{}))
    if (n.value == v) return n.name;
  return "";
}

/// The value spelled `text` (case-sensitive, whole text), or nullopt.
template <NamedEnum E>
constexpr std::optional<E> ParseName(std::string_view text) {
  for (const EnumName<E>& n : AllNames(E{}))
    if (text == n.name) return n.value;
  return std::nullopt;
}

/// Every spelling in list order, joined: NameList<MaskKind>() is "none, causal, custom";
/// NameList<MaskKind>(" or ") is "none, causal or custom".
template <NamedEnum E>
std::string NameList(const char* last_separator = ", ") {
  std::string out;
  const auto& all = AllNames(E{});
  const size_t n = std::size(all);
  for (size_t i = 0; i < n; ++i)
    out += std::string(i == 0 ? "" : i + 1 == n ? last_separator : ", ") + all[i].name;
  return out;
}

}  // namespace attnlab
