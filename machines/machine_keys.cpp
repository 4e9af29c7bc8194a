#include "machines/machine_keys.hpp"

#include <array>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "sim/net/network.hpp"

namespace cubesim {

namespace {

std::optional<std::string> parse_time_value(const ojson& v, Time& out) {
  try {
    if (v.is_number())
      out = time_from_seconds(v.get<double>());
    else if (v.is_string())
      out = parse_time(v.get<std::string>());
    else
      return "expected a time: a number of seconds or a string such as \"1.5ms\", got " + std::string(v.type_name());
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::overflow_error& e) {
    return e.what();
  }
  if (out < Time{}) return "a time cannot be negative";
  return std::nullopt;
}

std::optional<std::string> parse_count(const ojson& v, std::int64_t lo, std::int64_t hi, std::int64_t& out) {
  if (!v.is_number_integer())
    return "expected an integer, got " + std::string(v.is_number() ? "a fraction" : v.type_name());
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
    return "must be at most " + std::to_string(hi);
  out = v.get<std::int64_t>();
  if (out < lo || out > hi)
    return "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " + std::to_string(out);
  return std::nullopt;
}

/// "a", "b" or "c", each quoted.
std::string alternatives(std::span<const std::string_view> names) {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + "\"" + std::string(names[i]) + "\"";
  return s;
}

template <class T>
constexpr KeyKind kind_of() {
  if constexpr (std::is_same_v<T, Time>)
    return KeyKind::time;
  else if constexpr (std::is_same_v<T, PortModel>)
    return KeyKind::ports;
  else if constexpr (std::is_enum_v<T>)
    return KeyKind::name;
  else if constexpr (std::is_same_v<T, std::string>)
    return KeyKind::model;
  else
    return KeyKind::count;
}

template <auto Member>
using member_t = std::remove_cvref_t<decltype(std::declval<Machine&>().*Member)>;

template <auto Member>
std::optional<std::string> set_member(const MachineKey& k, Machine& m, const ojson& v) {
  using T = member_t<Member>;
  if constexpr (std::is_same_v<T, Time>) {
    Time t;
    if (auto e = parse_time_value(v, t)) return e;
    m.*Member = t;
  } else if constexpr (std::is_same_v<T, PortModel>) {
    if (v.is_string()) {
      const auto s = v.get<std::string>();
      if (s != "one" && s != "all")
        return std::string(k.key) + " must be \"one\", \"all\" or an integer k >= 1, got \"" + s + "\"";
      m.*Member = s == "one" ? PortModel{PortKind::one, 1} : PortModel{PortKind::all, 0};
      return std::nullopt;
    }
    std::int64_t x = 0;
    if (auto e = parse_count(v, k.lo, k.hi, x)) return e;
    m.*Member = x == 1 ? PortModel{PortKind::one, 1} : PortModel{PortKind::k, static_cast<int>(x)};
  } else if constexpr (std::is_enum_v<T>) {
    if (!v.is_string()) return std::string(k.key) + " must be a string";
    const auto s = v.get<std::string>();
    for (std::size_t i = 0; i < k.names.size(); ++i)
      if (s == k.names[i]) {
        m.*Member = static_cast<T>(i);
        return std::nullopt;
      }
    return std::string(k.key) + " must be " + alternatives(k.names) + ", got \"" + s + "\"";
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) return std::string(k.key) + " must be a string";
    const auto s = v.get<std::string>();
    if (find_network_model(s) == nullptr) {
      std::string known;
      for (const NetworkModelInfo& i : network_models()) known += (known.empty() ? "" : ", ") + std::string(i.name);
      return "unknown network model \"" + s + "\" (known: " + known + ")";
    }
    m.*Member = s;
  } else {
    std::int64_t x = 0;
    if (auto e = parse_count(v, k.lo, k.hi, x)) return e;
    m.*Member = static_cast<T>(x);
  }
  return std::nullopt;
}

template <auto Member>
ojson get_member(const MachineKey& k, const Machine& m) {
  using T = member_t<Member>;
  const T& x = m.*Member;
  if constexpr (std::is_same_v<T, Time>)
    return std::to_string(x.count()) + "ps";
  else if constexpr (std::is_same_v<T, PortModel>)
    return x.kind == PortKind::k ? ojson(x.k) : ojson(x.name());
  else if constexpr (std::is_enum_v<T>)
    return std::string(k.names[static_cast<std::size_t>(x)]);
  else if constexpr (std::is_same_v<T, std::string>)
    return x;
  else
    return static_cast<std::int64_t>(x);
}

/// The report's echo (KeyKind): a time as KEY_s and KEY_ps, ports by name ("one", "all", "2").
template <auto Member>
void report_member(const MachineKey& k, const Machine& m, ojson& j) {
  using T = member_t<Member>;
  const std::string key(k.key);
  const T& x = m.*Member;
  if constexpr (std::is_same_v<T, Time>) {
    j[key + "_s"] = x.seconds();
    j[key + "_ps"] = x.count();
  } else if constexpr (std::is_same_v<T, PortModel>) {
    j[key] = x.name();
  } else {
    j[key] = get_member<Member>(k, m);
  }
}

/// A row of the table: the member pointer fills in the kind, the parser and the getter.
template <auto Member>
MachineKey row(MachineKey k) {
  k.kind = kind_of<member_t<Member>>();
  k.set = &set_member<Member>;
  k.get = &get_member<Member>;
  k.report = &report_member<Member>;
  return k;
}

constexpr std::array<std::string_view, 2> kSwitchingNames{"store_and_forward", "pipelined"};  // enum Switching
constexpr std::array<std::string_view, 2> kModelKindNames{"formula", "calibrated"};           // enum ModelKind

bool pipelined(const Machine& m) { return m.switching == Switching::pipelined; }
bool has_t_elem(const Machine& m) { return m.t_elem != Time{}; }
bool has_t_init(const Machine& m) { return m.t_init != Time{}; }
bool has_o_send(const Machine& m) { return m.o_send != Time{}; }
bool has_o_recv(const Machine& m) { return m.o_recv != Time{}; }
bool has_t_call(const Machine& m) { return m.t_call != Time{}; }
bool names_network(const Machine& m) { return !m.network.empty(); }
bool shares_routers(const Machine& m) { return m.processors_per_router != 1; }
bool limits_injections(const Machine& m) { return m.router_injections != 0; }
bool calibrated(const Machine& m) { return m.kind != ModelKind::formula; }

constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;

const std::array kMachineKeys{
    row<&Machine::tau>({.key = "tau",
                        .meaning = "the start-up time: store-and-forward, paid by every packet on every link it "
                                   "crosses; pipelined, once per message at its source",
                        .unit = "per packet per hop",
                        .need = Need::always}),
    row<&Machine::tau_msg>({.key = "tau_msg",
                            .meaning = "extra start-up per message per hop (iPSC external packets)",
                            .unit = "per message per hop",
                            .need = Need::preset}),
    row<&Machine::t_c>(
        {.key = "t_c", .meaning = "transfer time per element", .unit = "per element", .need = Need::always}),
    row<&Machine::t_a>(
        {.key = "t_a", .meaning = "time per arithmetic operation", .unit = "per flop", .need = Need::preset}),
    row<&Machine::t_copy>({.key = "t_copy",
                           .meaning = "time per element copied in local memory",
                           .unit = "per element copied",
                           .need = Need::preset}),
    row<&Machine::packet_elements>({.key = "packet_elements",
                                    .meaning = "B_m, the largest packet the machine sends (the packet size in force is "
                                               "the algorithm's param B, at most this)",
                                    .unit = "elements",
                                    .need = Need::always,
                                    .lo = 1,
                                    .hi = kMaxElements}),
    row<&Machine::element_bytes>({.key = "element_bytes",
                                  .meaning = "bytes per element",
                                  .unit = "bytes",
                                  .need = Need::preset,
                                  .overridable = false,
                                  .lo = 1,
                                  .hi = 1024}),
    row<&Machine::ports>({.key = "ports",
                          .meaning = "the port model: one, all, or k concurrent sends and receives",
                          .unit = "ports (one, all or k)",
                          .need = Need::preset,
                          .lo = 1,
                          .hi = 64}),
    row<&Machine::switching>({.key = "switching",
                              .meaning = "how packets cross the network",
                              .need = Need::preset,
                              .names = kSwitchingNames}),
    row<&Machine::network>({.key = "network",
                            .meaning = "the network model (cubesim list machines); default: the switching's",
                            .written = &names_network}),
    row<&Machine::b_copy>({.key = "B_copy",
                           .meaning = "TR-572 §8.1: shorter blocks are copied into one buffer (0: never)",
                           .unit = "elements",
                           .lo = 0,
                           .hi = kMaxElements}),
    row<&Machine::t_hop>({.key = "t_hop",
                          .meaning = "pipelined: the fixed part of a dimension cycle",
                          .unit = "per dimension cycle",
                          .written = &pipelined}),
    row<&Machine::router_buffers>({.key = "router_buffers",
                                   .meaning = "pipelined: messages a router holds (0: unlimited)",
                                   .unit = "messages",
                                   .lo = 0,
                                   .hi = 1 << 20,
                                   .written = &pipelined}),
    row<&Machine::processors_per_router>({.key = "processors_per_router",
                                          .meaning = "cm2_router: processors sharing one router chip (a power of two)",
                                          .unit = "processors",
                                          .lo = 1,
                                          .hi = 1 << 20,
                                          .written = &shares_routers}),
    row<&Machine::router_injections>(
        {.key = "router_injections",
         .meaning = "cm2_router: messages a router chip takes from its processors a dimension cycle (0: no limit)",
         .unit = "messages per dimension cycle",
         .lo = 0,
         .hi = 1 << 20,
         .written = &limits_injections}),
    row<&Machine::t_elem>({.key = "t_elem",
                           .meaning = "loop overhead of a local matrix product, per result element",
                           .unit = "per result element",
                           .written = &has_t_elem}),
    row<&Machine::t_init>(
        {.key = "t_init",
         .meaning = "one-off initialisation of a product's result, per element, once per multiplication",
         .unit = "per result element",
         .written = &has_t_init}),
    row<&Machine::o_send>({.key = "o_send",
                           .meaning = "node software: CPU time of each send call before its message enters the network",
                           .unit = "per send",
                           .written = &has_o_send}),
    row<&Machine::o_recv>({.key = "o_recv",
                           .meaning = "node software: CPU time of each receive after its message has arrived",
                           .unit = "per receive",
                           .written = &has_o_recv}),
    row<&Machine::t_call>({.key = "t_call",
                           .meaning = "node software: overhead of each call of an arithmetic kernel (compute)",
                           .unit = "per call",
                           .written = &has_t_call}),
    row<&Machine::kind>({.key = "kind",
                         .meaning = "formula (the papers' formulas hold) or calibrated (fitted overheads)",
                         .overridable = false,
                         .names = kModelKindNames,
                         .written = &calibrated}),
};

}  // namespace

std::span<const MachineKey> machine_keys() { return kMachineKeys; }

const MachineKey* find_machine_key(std::string_view key) {
  for (const MachineKey& k : kMachineKeys)
    if (k.key == key) return &k;
  return nullptr;
}

std::string machine_key_list(bool (*pred)(const MachineKey&)) {
  std::string s;
  for (const MachineKey& k : kMachineKeys)
    if (pred == nullptr || pred(k)) s += (s.empty() ? "" : ", ") + std::string(k.key);
  return s;
}

std::string machine_key_description(const MachineKey& k) {
  std::string s(k.meaning);
  if (k.kind == KeyKind::time)
    s += ". Unit: a time " + std::string(k.unit) + ", a number of seconds or a string with a unit (ps, ns, us, ms, s)";
  else if (!k.unit.empty())
    s += ". Unit: " + std::string(k.unit);
  return s + ".";
}

}  // namespace cubesim
