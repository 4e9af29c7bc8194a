#include "sim/simgrid/backend.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <simgrid/s4u.hpp>
#include <stdexcept>

#include "sim/simgrid/platform.hpp"

namespace cubesim {

namespace sg4 = simgrid::s4u;

namespace {
struct Arrived {
  NodeId src = 0;
  int tag = 0;
  Buffer data;
};

class Slots;

/// One claim on a Slots, in the order claims are made: granted at once when a slot is free, else
/// queued. When it is granted, in whichever actor grants it, `next` is claimed on `then` at that
/// very instant (the cycle engine's order of acquisition, docs/model.md "Arbitration"). Only the
/// holder of the last claim of a chain ever sleeps, in wait().
struct Ticket {
  bool granted = false;
  Slots* then = nullptr;
  Ticket* next = nullptr;
  sg4::SemaphorePtr sem;
  void wait() {
    if (granted) return;
    sem = sg4::Semaphore::create(0);
    sem->acquire();  // returns once a release has granted this ticket
  }
};

/// A first-come first-served counting lock (one-port slots, links) without a simcall: the queue is
/// ours, not SimGrid's, so that claims are served in the order the node's process made them. A
/// simulated process's operations claim at their begin, in the reactor, and not when SimGrid first
/// runs the worker actor that carries them: SimGrid runs actors created at one instant in an
/// order of its own (measured: the later of two sends to one link went first).
class Slots {
 public:
  explicit Slots(int capacity = 1) : free_(capacity) {}
  void request(Ticket& t) {
    if (free_ > 0) {  // free slots imply an empty queue: a release serves the queue first
      --free_;
      grant(t);
    } else {
      queue_.push_back(&t);
    }
  }
  void release() {
    if (queue_.empty()) {
      ++free_;
      return;
    }
    Ticket* t = queue_.front();
    queue_.pop_front();
    grant(*t);
  }

 private:
  static void grant(Ticket& t) {
    t.granted = true;
    if (t.then != nullptr) t.then->request(*t.next);
    if (t.sem) t.sem->release();
  }
  int free_;
  std::deque<Ticket*> queue_;
};

/// A message's claims, made when it begins: its source's outgoing slot, then its link, then its
/// first packet's incoming slot at the destination (each claimed when the one before is granted).
struct Claim {
  Ticket out, link, in;
  Ticket* last = nullptr;  ///< granted: the first packet may go
};

struct NodeState {
  Task<> process;
  std::vector<detail::Waiter*> ready;  ///< groups whose operations have all completed
  std::size_t ready_head = 0;
  std::vector<detail::OpState*> to_start;  ///< active operations begun by the last resumptions
  std::deque<Arrived> arrived;             ///< delivered, not yet received
  std::vector<detail::OpState*> pending;   ///< receives waiting for a message
  std::int64_t inflight = 0;               ///< operations begun and not completed
  bool blocked = false;                    ///< the reactor sleeps on `wake`
  bool done = false;
  sg4::SemaphorePtr wake;
  std::unique_ptr<Slots> out, in;  ///< port slots; null for all-port
  std::int64_t next_request = 0;
};
}  // namespace

struct SimGridEngine::Impl {
  explicit Impl(SimGridEngine& s) : self(s) {}
  SimGridEngine& self;
  std::unique_ptr<sg4::Engine> engine;
  std::vector<sg4::Host*> hosts;
  /// Per directed link (node, port), made on first use: the mailbox its packets cross. Its
  /// permanent receiver is the destination's actor, so a packet starts flowing the moment it is
  /// sent (SimGrid's eager mode). One mailbox per link, not per destination: the sender takes its
  /// finished packet back off the mailbox's queue, which is first in, first out, and a link
  /// carries one packet at a time, so the packet at the head is always the sender's own. With one
  /// mailbox per destination, a sender whose packet had ended would wait there for the packet of
  /// another sender still crossing another link into the same node.
  struct Link {
    Slots slots{1};
    sg4::Mailbox* box = nullptr;
    NodeId receiver = -1;  ///< the node the mailbox's receiver is
  };
  std::vector<std::unique_ptr<Link>> links;  ///< per (node, port), made on first use
  std::vector<sg4::ActorPtr> actors;
  int token = 0;  ///< what a packet carries through SimGrid (the data travel beside it)
  std::vector<NodeState> nodes;
  std::size_t ports = 1;
  int slots = 0;  ///< outgoing / incoming slots per node; 0 = all-port (none)
  SimGridStats stats;
  std::int64_t finished = 0;
  double last_time = 0;
  std::string error;

  NodeState& node(NodeId n) { return nodes[static_cast<std::size_t>(n)]; }

  void fail(const std::string& what) {
    if (error.empty()) error = what;
    sg4::Actor::kill_all();
  }

  void complete(detail::OpState& op) {
    NodeState& ns = node(op.node);
    --ns.inflight;
    detail::Waiter& w = *op.waiter;
    if (--w.remaining == 0 && w.handle) {
      ns.ready.push_back(&w);
      if (ns.blocked) {
        ns.blocked = false;
        ns.wake->release();
      }
    }
  }

  /// A message has fully arrived at `dst`: the oldest matching receive takes it, or it waits.
  void deliver(NodeId src, NodeId dst, int tag, Buffer data) {
    NodeState& ns = node(dst);
    for (auto it = ns.pending.begin(); it != ns.pending.end(); ++it) {
      detail::OpState* op = *it;
      if (op->peer == src && op->tag == tag) {
        ns.pending.erase(it);
        op->buffer = std::move(data);
        complete(*op);
        return;
      }
    }
    ns.arrived.push_back(Arrived{src, tag, std::move(data)});
  }

  bool start_recv(detail::OpState& op) {
    NodeState& ns = node(op.node);
    for (auto it = ns.arrived.begin(); it != ns.arrived.end(); ++it) {
      if (it->src == op.peer && it->tag == op.tag) {
        op.buffer = std::move(it->data);
        ns.arrived.erase(it);
        return true;
      }
    }
    ns.pending.push_back(&op);
    return false;
  }

  [[nodiscard]] std::size_t link_index(NodeId src, NodeId dst) const {
    return static_cast<std::size_t>(src) * ports + static_cast<std::size_t>(self.topology_.next_hop(src, dst));
  }

  Link& link(NodeId src, NodeId dst) {
    std::unique_ptr<Link>& l = links[link_index(src, dst)];
    if (!l) l = std::make_unique<Link>();
    return *l;
  }

  /// Claims what a send needs, in the order the cycle engine does (see Claim).
  std::shared_ptr<Claim> claim(const detail::OpState& op) {
    auto c = std::make_shared<Claim>();
    NodeState& s = node(op.node);
    NodeState& d = node(op.peer);
    Slots& lk = link(op.node, op.peer).slots;
    if (slots > 0) {
      if (!s.out) s.out = std::make_unique<Slots>(slots);
      if (!d.in) d.in = std::make_unique<Slots>(slots);
    }
    c->last = d.in ? &c->in : &c->link;
    if (d.in) c->link.then = d.in.get(), c->link.next = &c->in;
    if (s.out) {
      c->out.then = &lk, c->out.next = &c->link;
      s.out->request(c->out);
    } else {
      lk.request(c->link);
    }
    return c;
  }

  void transmit(detail::OpState& op, Claim& claimed) {
    const Machine& m = self.machine_;
    const NodeId src = op.node, dst = op.peer;
    Buffer data = std::move(op.buffer);
    const std::int64_t elements = data.size();
    const std::int64_t b = self.options_.packet_elements;
    const std::int64_t packets = elements == 0 ? 1 : (elements + b - 1) / b;
    ++stats.messages;
    NodeState& s = node(src);
    NodeState& d = node(dst);
    Link& link = this->link(src, dst);
    sg4::Mailbox*& box = link.box;
    if (!box) box = sg4::Mailbox::by_name(sgplat::host_name(src) + ":" + std::to_string(link_index(src, dst) % ports));
    if (link.receiver != dst) {  // a routed send's first link leads to others too; it is ours until we release it
      box->set_receiver(actors[static_cast<std::size_t>(dst)]);
      link.receiver = dst;
    }
    claimed.last->wait();
    for (std::int64_t p = 0; p < packets; ++p) {
      const std::int64_t e = std::min(b, elements - p * b);
      if (p > 0 && d.in) {  // the slot was handed back at the end of the packet before
        Ticket t;
        d.in->request(t);
        t.wait();
      }
      if (p == 0 && m.tau_msg.count() > 0) {
        sg4::this_actor::sleep_for(m.tau_msg.seconds());
        ++stats.activities;
      }
      // A mailbox comm, not Comm::sendto: SimGrid 3.32 keeps every host-to-host comm in one list
      // that it searches linearly when each ends, quadratic in the comms in flight.
      box->put(&token, static_cast<std::uint64_t>(std::max<std::int64_t>(e, 0) * m.element_bytes));
      box->get<int>();  // take it off the mailbox's done queue: no simulated time
      ++stats.packets;
      ++stats.activities;
      if (d.in) d.in->release();
    }
    link.slots.release();
    if (s.out) s.out->release();
    deliver(src, dst, op.tag, std::move(data));
    complete(op);
  }

  /// Runs one active operation to its end, in the calling actor.
  /// `claimed`: a send's claims, made at its begin (null: make them now).
  void execute(detail::OpState& op, Claim* claimed = nullptr) {
    const Machine& m = self.machine_;
    switch (op.kind) {
      case detail::OpKind::send:
        if (claimed == nullptr)
          transmit(op, *claim(op));
        else
          transmit(op, *claimed);
        return;
      case detail::OpKind::compute:
        sg4::this_actor::execute(static_cast<double>(op.amount));
        break;
      case detail::OpKind::copy:
        sg4::this_actor::sleep_for((m.t_copy * op.amount).seconds());
        break;
      case detail::OpKind::delay:
        sg4::this_actor::sleep_for(op.duration().seconds());
        break;
      case detail::OpKind::recv:
        break;
    }
    ++stats.activities;
    complete(op);
  }

  /// A worker actor of one host: runs one operation, then waits on its host's idle list for the
  /// next. Creating an actor costs a context (SimGrid zeroes its whole stack, 64 KiB): pooling
  /// them made the agreement grid's runs about twice as fast (docs/simgrid.md). A worker takes
  /// its operation at the instant the reactor hands it over, as a new actor did, and an
  /// operation's claims are made in the reactor either way, so the simulated times are the same.
  struct Worker {
    sg4::SemaphorePtr go = sg4::Semaphore::create(0);
    detail::OpState* op = nullptr;  ///< null when woken: leave
    std::shared_ptr<Claim> claim;
  };
  std::vector<std::unique_ptr<Worker>> pool;  ///< every worker made, owned here
  std::vector<std::vector<Worker*>> idle;     ///< per node: workers waiting for an operation
  bool leaving = false;                       ///< every process has finished: idle workers end

  void work(NodeId node, Worker& w) {
    for (;;) {
      try {
        execute(*w.op, w.claim.get());
      } catch (const std::exception& e) {
        fail("node " + std::to_string(node) + ": " + e.what());
        return;
      }
      w.op = nullptr;
      w.claim.reset();
      if (leaving) return;
      idle[static_cast<std::size_t>(node)].push_back(&w);
      w.go->acquire();
      if (w.op == nullptr) return;
    }
  }

  void spawn(detail::OpState* op) {
    std::shared_ptr<Claim> c = op->kind == detail::OpKind::send ? claim(*op) : nullptr;
    std::vector<Worker*>& free = idle[static_cast<std::size_t>(op->node)];
    if (!free.empty()) {
      Worker* w = free.back();
      free.pop_back();
      w->op = op;
      w->claim = std::move(c);
      w->go->release();
      return;
    }
    ++stats.workers;
    Worker* w = pool.emplace_back(std::make_unique<Worker>()).get();
    w->op = op;
    w->claim = std::move(c);
    const NodeId node = op->node;
    sg4::Actor::create("w", hosts[static_cast<std::size_t>(node)], [this, node, w] { work(node, *w); });
  }

  /// Every process has finished: the idle workers end (the busy ones end when their operation does).
  void dismiss_workers() {
    leaving = true;
    for (std::vector<Worker*>& free : idle) {
      for (Worker* w : free) w->go->release();
      free.clear();
    }
  }

  void finish(NodeId id) {
    NodeState& ns = node(id);
    ns.done = true;
    if (std::exception_ptr e = ns.process.error()) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        fail("node " + std::to_string(id) + " at t=" + format_time(self.now()) + ": " + ex.what());
        return;
      }
    }
    ++finished;
    last_time = std::max(last_time, sg4::Engine::get_clock());
    if (finished == static_cast<std::int64_t>(nodes.size())) dismiss_workers();
  }

  /// The node's actor: resumes its process whenever an awaited group has completed, and starts
  /// the operations the process begins.
  void reactor(NodeId id) {
    NodeState& ns = node(id);
    ns.wake = sg4::Semaphore::create(0);
    ns.process.handle().resume();
    ++stats.resumes;
    for (;;) {
      while (ns.ready_head < ns.ready.size()) {
        detail::Waiter* w = ns.ready[ns.ready_head++];
        detail::resume(*w);
        ++stats.resumes;
      }
      ns.ready.clear();
      ns.ready_head = 0;
      if (ns.process.done()) {
        finish(id);
        return;
      }
      if (!ns.to_start.empty()) {
        detail::OpState* first = ns.to_start.front();
        // Alone in flight (every operation in flight is of one awaited group): nothing can want
        // this process before that group is over, so the reactor runs the operation itself.
        if (ns.to_start.size() == 1 && first->waiter->handle && ns.inflight == first->waiter->remaining) {
          ns.to_start.clear();
          ++stats.inline_ops;
          execute(*first);
          continue;
        }
        for (detail::OpState* op : ns.to_start) spawn(op);
        ns.to_start.clear();
      }
      if (ns.ready_head >= ns.ready.size()) {
        ns.blocked = true;
        ns.wake->acquire();
      }
    }
  }
};

SimGridEngine::SimGridEngine(const Machine& machine, const Topology& topology, EngineOptions options, SimGridOptions sg)
    : machine_(machine), topology_(topology), options_(options), sg_(sg) {
  if (options_.packet_elements < 1) throw std::invalid_argument("packet size must be at least 1 element");
  if (auto why = sgplat::unsupported(machine_, topology_)) throw std::invalid_argument(why->message);
  const auto n = static_cast<std::size_t>(topology_.size());
  results_.resize(n);
  nodes_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) nodes_.emplace_back(this, static_cast<NodeId>(i));
}

SimGridEngine::~SimGridEngine() = default;

Time SimGridEngine::now() const { return Time::ps(std::llround(sg4::Engine::get_clock() * 1e12)); }

void SimGridEngine::check_node(NodeId node, const char* what) const {
  if (node < 0 || node >= topology_.size())
    throw std::out_of_range(std::string(what) + ": node " + std::to_string(node) + " is outside the topology (" +
                            std::to_string(topology_.size()) + " nodes)");
}

void SimGridEngine::prepare_waiter(detail::Waiter& w, std::coroutine_handle<> h, int count) {
  w.handle = h;
  w.remaining = count;
}

bool SimGridEngine::end_start(detail::Waiter& w) { return --w.remaining != 0; }

std::int64_t SimGridEngine::start_request(detail::OpState& op, detail::Waiter& w) {
  prepare_waiter(w, std::coroutine_handle<>{}, 1);
  w.node = op.node;
  const std::int64_t id = ++impl_->node(op.node).next_request;
  if (begin(op, w)) w.remaining = 0;
  return id;
}

bool SimGridEngine::begin(detail::OpState& op, detail::Waiter& w) {
  op.waiter = &w;
  NodeState& ns = impl_->node(op.node);
  switch (op.kind) {
    case detail::OpKind::send:
      if (op.peer == op.node) {  // to itself: delivered at once, no link crossed
        ++impl_->stats.messages;
        impl_->deliver(op.node, op.node, op.tag, std::move(op.buffer));
        return true;
      }
      break;
    case detail::OpKind::recv:
      if (impl_->start_recv(op)) return true;
      ++ns.inflight;
      return false;
    case detail::OpKind::compute:
      if (op.amount == 0 || machine_.t_a.count() == 0) return true;
      break;
    case detail::OpKind::copy:
      if (op.amount == 0 || machine_.t_copy.count() == 0) return true;
      break;
    case detail::OpKind::delay:
      if (op.duration() == Time{}) return true;
      break;
  }
  ++ns.inflight;
  ns.to_start.push_back(&op);
  return false;
}

SimGridStats SimGridEngine::run(const ProcessFactory& make_process) {
  const auto wall0 = std::chrono::steady_clock::now();
  impl_ = std::make_unique<Impl>(*this);
  Impl& im = *impl_;
  // SimGrid's own "deadlock detected" report (ker_engine) goes nowhere: run() names the blocked
  // nodes and what they wait for, in one line.
  std::vector<std::string> args = {"cubesim", "--log=root.thres:warning", "--log=xbt_cfg.thres:warning",
                                   "--log=ker_engine.app:file:/dev/null"};
  for (const std::string& f : sgplat::exact_flags()) args.push_back(f);
  args.push_back("--cfg=contexts/stack-size:" + std::to_string(sg_.stack_kib));
  args.push_back("--cfg=contexts/guard-size:0");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  im.engine = std::make_unique<sg4::Engine>(&argc, argv.data());

  // The platform is loaded from the very XML that `cubesim export-platform` writes.
  namespace fs = std::filesystem;
  const fs::path xml = fs::temp_directory_path() / ("cubesim-platform-" + std::to_string(::getpid()) + ".xml");
  {
    std::ofstream f(xml, std::ios::binary | std::ios::trunc);
    f << sgplat::platform_xml(machine_, topology_, machine_.tau);
    if (!f) throw std::runtime_error("cannot write the SimGrid platform to " + xml.string());
  }
  try {
    im.engine->load_platform(xml.string());
  } catch (...) {
    fs::remove(xml);
    throw;
  }
  fs::remove(xml);
  const auto n = static_cast<std::size_t>(topology_.size());
  im.hosts.resize(n);
  for (std::size_t i = 0; i < n; ++i) im.hosts[i] = im.engine->host_by_name(sgplat::host_name(static_cast<NodeId>(i)));
  im.stats.platform_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();

  im.ports = static_cast<std::size_t>(std::max(topology_.num_ports(), 1));
  im.links.resize(n * im.ports);
  im.slots = machine_.ports.kind == PortKind::all ? 0 : machine_.ports.kind == PortKind::one ? 1 : machine_.ports.k;
  im.nodes.resize(n);
  im.actors.resize(n);
  im.idle.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    im.nodes[i].process = make_process(nodes_[i]);
    const std::string name = sgplat::host_name(static_cast<NodeId>(i));
    sg4::ActorPtr actor = sg4::Actor::create(name, im.hosts[i], [&im, i] {
      try {
        im.reactor(static_cast<NodeId>(i));
      } catch (const std::exception& e) {
        im.fail("node " + std::to_string(i) + ": " + e.what());
      }
    });
    im.actors[i] = actor;
  }
  im.engine->run();

  if (!im.error.empty()) throw SimulationError(im.error);
  if (im.finished != static_cast<std::int64_t>(n)) {
    std::string list;
    std::int64_t blocked = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (im.nodes[i].done) continue;
      if (++blocked > 8) continue;
      std::string waits;
      for (const detail::OpState* op : im.nodes[i].pending)
        waits += (waits.empty() ? "" : ", ") + std::string("recv from node ") + std::to_string(op->peer) + " tag " +
                 std::to_string(op->tag);
      if (waits.empty()) waits = "nothing the engine can name";
      list += (list.empty() ? "" : "; ") + std::string("node ") + std::to_string(i) + " waits for " + waits;
    }
    std::string msg = "deadlock under SimGrid at t=" + format_time(now()) + ": " + std::to_string(blocked) + " of " +
                      std::to_string(n) + " processes never finish: " + list;
    if (blocked > 8) msg += "; and " + std::to_string(blocked - 8) + " more";
    throw DeadlockError(msg);
  }
  for (const NodeState& ns : im.nodes) im.stats.unreceived_messages += static_cast<std::int64_t>(ns.arrived.size());
  im.stats.time_s = im.last_time;
  im.stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return im.stats;
}

}  // namespace cubesim
