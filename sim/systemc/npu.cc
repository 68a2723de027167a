#include "sim/systemc/npu.h"

#include <omp.h>
#include <systemc>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <memory>

#include "sim/systemc/engines.h"

// libsystemc references sc_main; n3 has its own main and elaborates from it.
int sc_main(int, char**) { return 0; }

namespace n3::sc {

// Fetch, decode and dispatch: one instruction per dispatch_cycles into the
// engine queues (blocking while the target queue is full); control
// instructions run here, in order, after their tokens.
class Ctl : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Ctl);
  Ctl(sc_core::sc_module_name n, Context& c, bool progress, DecodeStage* decode, CtlStage* exec)
      : sc_core::sc_module(n), c_(c), progress_(progress), decode_(decode), exec_(exec) {
    SC_THREAD(run);
  }

  // The engines' instruction queues, DMA GEMV GEMM SFU, and the token board.
  std::array<sc_core::sc_port<sc_core::sc_fifo_out_if<sim::Issued>>, kEngines - 1> queue;
  sc_core::sc_port<TokenIf> tokens;

  // run_npu sets `go` and notifies `start`: one program per request.
  sc_core::sc_event start;
  bool go = false;

 private:
  void run() {
    try {
      while (true) {
        while (!go) sc_core::wait(start);
        go = false;
        run_program();
        c_.halted = true;
      }
    } catch (...) {
      c_.fail(std::current_exception());
    }
  }

  void run_program() {
    {
      UnitStats& st = c_.units[0];
      const double clk = c_.p.core_ps();
      auto last = std::chrono::steady_clock::now();
      while (!c_.sim->halted()) {
        const sim::FuncSim::Next n = c_.sim->peek();
        if (decode_) decode_->fetched(c_.sim->program().code[n.pc], n.pc, c_.sim->stats().fetched + 1);
        double t0 = c_.now_ps();
        if (n.engine == 0) {
          tokens->acquire(0, n.wait);
          st.stall_ps["tokens"] += c_.now_ps() - t0;
          const double start = c_.now_ps();
          CtlStage::Executed ex;
          if (exec_) {
            ex.word = c_.sim->program().code[n.pc];
            ex.pc = n.pc;
            ex.dyn = c_.sim->stats().fetched + 1;
            for (int i = 0; i < isa::kNumRegs; ++i) ex.before[size_t(i)] = c_.sim->reg(i);
          }
          c_.sim->exec_control();
          if (exec_) {
            for (int i = 0; i < isa::kNumRegs; ++i) ex.after[size_t(i)] = c_.sim->reg(i);
            ex.next_pc = c_.sim->pc();
            ex.halted = c_.sim->halted();
            ex.sim = c_.sim;
            exec_->executed(ex);
          }
          sc_core::wait(c_.ps(double(c_.p.timing.ctl_cycles.value) * clk));
          st.busy_ps += c_.now_ps() - start;
          ++st.instructions;
          if (c_.record_slices) c_.slices.push_back({0, n.pc, start, c_.now_ps() - start});
          tokens->push(0, n.signal);
        } else {
          auto& q = queue[static_cast<size_t>(n.engine - 1)];
          while (q->num_free() == 0) sc_core::wait(q->data_read_event());
          st.stall_ps[std::string("queue_full_") + isa::name_of(static_cast<isa::Engine>(n.engine))] += c_.now_ps() - t0;
          const double start = c_.now_ps();
          q->nb_write(c_.sim->dispatch());
          ++c_.dispatched[static_cast<size_t>(n.engine)];
          sc_core::wait(c_.ps(double(c_.p.timing.dispatch_cycles.value) * clk));
          st.busy_ps += c_.now_ps() - start;
        }
        if (progress_ && (c_.sim->stats().fetched & 0xfff) == 0) {
          const auto t = std::chrono::steady_clock::now();
          if (t - last > std::chrono::seconds(2)) {
            last = t;
            std::fprintf(stderr, "n3 sim: %llu instructions, %.0f cycles simulated\n",
                         static_cast<unsigned long long>(c_.sim->stats().fetched), c_.now_ps() / clk);
          }
        }
      }
      if (decode_) decode_->drain();
      if (exec_) exec_->drain();
    }
  }

  Context& c_;
  bool progress_;
  DecodeStage* decode_;  // null: the C++ decoder alone
  CtlStage* exec_;       // null: the functional core alone
};

namespace {

// The netlist: every unit bound to its neighbours through sc_ports only.
struct Top : sc_core::sc_module {
  Top(sc_core::sc_module_name n, Context& c, const RunOptions& o)
      : sc_core::sc_module(n),
        ddr("ddr_hp", c),
        l2("l2", c),
        wbuf("wbuf", c),
        dma_unit(o.dma_unit.make ? o.dma_unit.make("dma", c) : std::make_unique<DmaUnit>("dma", c)),
        dma(*dma_unit),
        gemv_unit(o.gemv_unit.make ? o.gemv_unit.make("gemv", c) : std::make_unique<MacUnit>("gemv", c, 2)),
        gemv(*gemv_unit),
        gemm_unit(o.gemm_unit.make ? o.gemm_unit.make("gemm", c) : std::make_unique<MacUnit>("gemm", c, 3)),
        gemm(*gemm_unit),
        sfu_unit(o.sfu_unit.make ? o.sfu_unit.make("sfu", c) : std::make_unique<SfuUnit>("sfu", c)),
        sfu(*sfu_unit),
        decoder(o.decoder.make ? o.decoder.make("decoder", c) : nullptr),
        ctl_stage(o.ctl_stage.make ? o.ctl_stage.make("ctl_exec", c) : nullptr),
        ctl("ctl", c, o.progress, decoder.get(), ctl_stage.get()) {
    EngineUnit* engines[] = {&dma, &gemv, &gemm, &sfu};
    for (size_t i = 0; i < 4; ++i) {
      engines[i]->ddr.bind(ddr.socket);
      engines[i]->l2.bind(l2.socket);
      engines[i]->tokens(c.tokens);
      ctl.queue[i](engines[i]->queue);
    }
    ctl.tokens(c.tokens);
    gemv.wbuf(wbuf);
    gemm.wbuf(wbuf);
  }
  DdrHp ddr;
  L2 l2;
  WeightBuffer wbuf;  // shared by the GEMV and GEMM weight streams
  std::unique_ptr<DmaUnit> dma_unit;  // the timing model's, or an RTL unit
  DmaUnit& dma;
  std::unique_ptr<MacUnit> gemv_unit;  // the timing model's, or an RTL unit
  MacUnit& gemv;
  std::unique_ptr<MacUnit> gemm_unit;  // the timing model's, or an RTL unit
  MacUnit& gemm;
  std::unique_ptr<SfuUnit> sfu_unit;  // the timing model's, or an RTL unit
  SfuUnit& sfu;
  std::unique_ptr<DecodeStage> decoder;  // an RTL decoder beside the C++ one, or none
  std::unique_ptr<CtlStage> ctl_stage;   // an RTL execute stage beside the functional core, or none
  Ctl ctl;
};

}  // namespace

namespace {
// The one elaboration of this process (SystemC elaborates once): the units
// persist between programs; each run_npu starts the control unit again and
// reports times relative to its own start.
struct Elaborated {
  std::unique_ptr<Context> c;
  std::unique_ptr<Top> top;
  std::string design;  // RunOptions::design() of the elaboration
  bool broken = false;  // a trap or deadlock left units mid-instruction
};
Elaborated& elaborated() {
  static Elaborated* e = new Elaborated;  // lives to exit, like the simulation context
  return *e;
}
}  // namespace

void quiet_reports() {
  setenv("SYSC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
}

Report run_npu(sim::FuncSim& s, const timing::Params& p, const RunOptions& o) {
  Elaborated& el = elaborated();
  require(!el.broken, "n3 sim --backend systemc: an earlier run in this process trapped; the model cannot run again");
  if (!el.c) {
    quiet_reports();
    el.c = std::make_unique<Context>();
    el.c->p = p;
    el.top = std::make_unique<Top>("npu", *el.c, o);
    el.design = o.design();
  }
  require(el.design == o.design(), "n3 sim --backend systemc: the model was elaborated with units '" + el.design +
                                       "', not '" + o.design() + "'; one design per process");
  require(el.c->p.name == p.name && el.c->p.clocks.core_mhz.value == p.clocks.core_mhz.value &&
              el.c->p.timing.queue_depth.value == p.timing.queue_depth.value,
          "n3 sim --backend systemc: the model was elaborated for hardware '" + el.c->p.name + "'; one design point per process");
  Context* c = el.c.get();
  Top* top = el.top.get();
  // Fresh per-run state; the DDR and L2 reservations are absolute times in the past.
  c->sim = &s;
  c->p = p;
  c->record_slices = o.trace;
  c->units = {};
  c->slices.clear();
  c->macs = c->gemm_macs = c->sfu_work = 0;
  c->completed = {};
  c->dispatched = {};
  c->halted = false;
  top->ddr.reset_counts();
  top->l2.reset_counts();
  top->wbuf.reset_counts();
  const bool wait_for_start = std::getenv("N3_SC_TARGETS_WAIT") != nullptr;  // TLM conformance mode (docs/timing.md)
  top->ddr.set_wait_for_start(wait_for_start);
  top->l2.set_wait_for_start(wait_for_start);
  for (const auto& core : top->gemv.cores()) core->busy_ps = 0;
  const double t0 = c->now_ps();
  c->run_start_ps = t0;
  top->ctl.go = true;
  top->ctl.start.notify(sc_core::SC_ZERO_TIME);
  // The units run the functional core's effects from SystemC threads, one
  // instruction at a time; the GEMV kernels' OpenMP team, forked once per
  // instruction, cost more than it saved (tiny, 13 + 24 tokens: 0.13 s on one
  // thread, 0.3 to 25 s on two depending on the machine's load, because the
  // team spins while the simulation kernel switches threads). One thread
  // unless OMP_NUM_THREADS asks otherwise.
  const bool pinned = std::getenv("OMP_NUM_THREADS") != nullptr;
  const int threads = omp_get_max_threads();
  if (!pinned) omp_set_num_threads(1);
  sc_core::sc_start();
  if (!pinned) omp_set_num_threads(threads);
  if (c->error) {
    el.broken = true;
    std::rethrow_exception(c->error);
  }
  bool drained = c->halted;
  for (int e = 1; e < kEngines; ++e) drained &= c->completed[static_cast<size_t>(e)] == c->dispatched[static_cast<size_t>(e)];
  if (!drained) {
    el.broken = true;
    std::string m = c->halted ? "after sys.halt," : "the control engine waits for a token at instruction " +
                                                        std::to_string(s.peek().pc) + ";";
    for (int e = 1; e < kEngines; ++e) {
      const uint64_t left = c->dispatched[static_cast<size_t>(e)] - c->completed[static_cast<size_t>(e)];
      if (left) m += std::string(" ") + isa::name_of(static_cast<isa::Engine>(e)) + " has " + std::to_string(left) + " instruction(s) waiting for tokens";
    }
    s.trap_at(sim::TrapKind::Deadlock, -1, m + " that no instruction will push");
  }
  s.finish_checks();

  Report r;
  r.params = p;
  for (int e = 0; e < kEngines; ++e) {
    const UnitStats& u = c->units[static_cast<size_t>(e)];
    UnitReport ur{isa::name_of(static_cast<isa::Engine>(e)), u.instructions, u.busy_ps, {}};
    for (const auto& [k, v] : u.stall_ps) ur.stall_ps.push_back({k, v});
    r.units.push_back(ur);
  }
  double end = t0;
  for (const Slice& sl : c->slices) end = std::max(end, sl.start_ps + sl.dur_ps);
  r.total_ps = std::max(end, c->now_ps()) - t0;
  r.hp_port_bytes = top->ddr.port_bytes();
  r.ddr_read = top->ddr.bytes_read();
  r.ddr_written = top->ddr.bytes_written();
  r.ddr_busy_ps = top->ddr.busy_ps();
  r.l2_bytes = top->l2.bytes();
  r.tracks = c->tracks;
  r.resources.push_back({"DDR channel", top->ddr.channel().busy_ps(), top->ddr.channel().bytes()});
  for (const auto& h : top->ddr.hp()) r.resources.push_back({h->track_name(), h->busy_ps(), h->bytes()});
  for (const auto& l : top->l2.ports()) r.resources.push_back({l->track_name(), l->busy_ps(), l->bytes()});
  r.resources.push_back({"weight buffers", 0, top->wbuf.bytes(), false, true});
  for (size_t k = 0; k < top->gemv.cores().size(); ++k)
    r.resources.push_back({"GEMV core " + std::to_string(k), top->gemv.cores()[k]->busy_ps, 0, true, false});
  r.macs = c->macs;
  r.gemm_macs = c->gemm_macs;
  r.sfu_work = c->sfu_work;
  // Transfers are booked out of time order (a result write when its
  // instruction starts): time order per track for the trace.
  std::stable_sort(c->slices.begin(), c->slices.end(), [](const Slice& a, const Slice& b) { return a.start_ps < b.start_ps; });
  for (const Slice& sl : c->slices) r.slices.push_back({sl.track, sl.pc, sl.start_ps - t0, sl.dur_ps, sl.kind, sl.engine});
  return r;
}

}  // namespace n3::sc
