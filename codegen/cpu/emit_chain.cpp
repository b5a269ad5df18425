// SPDX-License-Identifier: Apache-2.0
#include "codegen/cpu/emit_chain.h"

#include <cmath>
#include <functional>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include "codegen/chain_layout.h"
#include "codegen/vector_math.h"
#include "passes/cost_model.h"
#include "passes/target.h"

namespace fxc::codegen {
namespace {

using namespace llvm;

// Fields of FxcChainArgs (kernel_abi.h), in order.
enum ArgField { kIn, kOut, kChannels, kSamples, kParams, kDelayLengths, kState, kDelayLines, kPositions };

// Algorithm: one function per chain. For each group of channels (a vector of `lanes` channels
// for channel_lanes, one channel otherwise), load the group's section state into registers,
// then for each sample run every stage in order on the value in registers (sections in
// transposed direct form II, gains, clips, tanh, delay rings, FIR rings), and store the
// result; finally store the state back. The whole chain is one pass over memory. A chain of
// FIRs and memoryless stages runs in time lanes instead (emit_time_lanes): a channel at a
// time, a vector of its consecutive samples through every stage.
class ChainEmitter {
 public:
  // `dtype`: the signal's; coefficients, state and arithmetic use compute_dtype.
  ChainEmitter(Module& module, const ir::Chain& chain, DType dtype, int channels, std::string name)
      : m_(module),
        ctx_(module.getContext()),
        b_(ctx_),
        chain_(chain),
        layout_(layout_of(chain)),
        transposed_firs_(transposed_firs(chain)),
        t_(compute_dtype(chain, dtype) == DType::f32 ? Type::getFloatTy(ctx_) : Type::getDoubleTy(ctx_)),
        sample_t_(dtype == DType::f32 ? Type::getFloatTy(ctx_) : Type::getDoubleTy(ctx_)),
        i64_(Type::getInt64Ty(ctx_)),
        ptr_(PointerType::getUnqual(ctx_)),
        name_(std::move(name)),
        channels_(channels) {}

  // `time_lanes`: each channel's samples as vectors of that many (passes::fir_time_lanes),
  // `lanes` then 1; 0 otherwise.
  void emit(int lanes, bool wavefront, bool partial, int time_lanes) {
    wavefront_ = wavefront;
    partial_ = partial;
    time_lanes_ = time_lanes;
    args_ty_ = StructType::get(ctx_, {ptr_, ptr_, i64_, i64_, ptr_, ptr_, ptr_, ptr_, ptr_});
    Function* f = Function::Create(FunctionType::get(Type::getVoidTy(ctx_), {ptr_}, false),
                                   Function::ExternalLinkage, name_, m_);
    f->addFnAttr(Attribute::NoUnwind);
    // Vector registers spilled to the stack get aligned slots: without this LLVM keeps the
    // caller's 16-byte alignment and spills 32-byte vectors with unaligned moves, half of which
    // then split a cache line whenever the caller's stack is not 32-byte aligned. W1 in float64
    // (8 ch x 5 s, 218 spill moves) took 8.9 ms against 6.2 ms from one process to the next,
    // with the stack's address (ASLR) deciding.
    f->addFnAttr(Attribute::getWithStackAlignment(ctx_, Align(64)));
    f->addParamAttr(0, Attribute::NoAlias);
    BasicBlock* entry = BasicBlock::Create(ctx_, "entry", f);
    b_.SetInsertPoint(entry);
    // No general contraction: multiply-adds are written as llvm.fmuladd, which a target
    // fuses (or not) the same way wherever it appears. With free contraction, the loops a
    // sample may pass through (wavefront fill, steady, drain; lanes, remainder) could round
    // it differently, and a stream's blocks would not reproduce the whole signal bit for bit.

    Value* args = f->getArg(0);
    for (int i = 0; i < 9; ++i)
      fields_[i] = b_.CreateLoad(i == kChannels || i == kSamples ? static_cast<Type*>(i64_) : ptr_,
                                 b_.CreateStructGEP(args_ty_, args, i));
    load_scalar_params();

    // The channel count is part of the kernel's shape (channels_ > 0), so only the loops that
    // can run are emitted: halving code size halves LLVM's time. The chunked scan calls a
    // kernel with another count of lanes (chunks), so it keeps both loops (channels_ == 0).
    Value* channels = fields_[kChannels];
    Value* start = b_.getInt64(0);
    bool full_groups = channels_ == 0 || channels_ >= lanes;
    bool remainder = channels_ == 0 || lanes == 1 || channels_ % lanes != 0;
    if (lanes > 1 && full_groups) {
      start = loop(start, lanes,
                   [&](Value* c) { return b_.CreateICmpSLE(b_.CreateAdd(c, b_.getInt64(lanes)), channels); },
                   [&](Value* c0) { emit_group(c0, lanes); });
    }
    // The channels past the last whole group as one vector whose other lanes compute nothing
    // anyone reads (they repeat the last channel, and store nothing), where that costs less than
    // a scalar pass per channel (partial_group_vectorized): from two channels on. Found by a
    // performance hunt: 7 channels of a float32 compressor took 6x the time of 8 (71 against
    // 11.6 ms per 10 s), a stereo one 2.3x the time it takes now. The group runs when the call's
    // remainder is the kernel's (a whole call, or the last part of one split between threads,
    // which keeps the remainder whole); any other remainder runs one channel at a time.
    const int leftover = channels_ > 0 && lanes > 1 ? channels_ % lanes : 0;
    if (partial_ && leftover >= 2) {
      Function* f = b_.GetInsertBlock()->getParent();
      BasicBlock* vector = BasicBlock::Create(ctx_, "partial_group", f);
      BasicBlock* scalar = BasicBlock::Create(ctx_, "remainder", f);
      BasicBlock* done = BasicBlock::Create(ctx_, "done", f);
      b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateSub(channels, start), b_.getInt64(leftover)), vector, scalar);
      b_.SetInsertPoint(vector);
      live_lanes_ = leftover;
      emit_group(start, lanes);
      live_lanes_ = 0;
      b_.CreateBr(done);
      b_.SetInsertPoint(scalar);
      loop(start, 1, [&](Value* c) { return b_.CreateICmpSLT(c, channels); }, [&](Value* c) { emit_group(c, 1); });
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    } else if (remainder) {
      loop(start, 1, [&](Value* c) { return b_.CreateICmpSLT(c, channels); },
           [&](Value* c) { emit_group(c, 1); });
    }
    b_.CreateRetVoid();
  }

 private:
  // A loop from `begin` while cond(i), each pass computing the next i from i; returns i at
  // the exit.
  Value* repeat(Value* begin, const std::function<Value*(Value*)>& cond, const std::function<Value*(Value*)>& body) {
    Function* f = b_.GetInsertBlock()->getParent();
    BasicBlock* before = b_.GetInsertBlock();
    BasicBlock* header = BasicBlock::Create(ctx_, "loop", f);
    BasicBlock* inside = BasicBlock::Create(ctx_, "body", f);
    BasicBlock* after = BasicBlock::Create(ctx_, "exit", f);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    PHINode* i = b_.CreatePHI(i64_, 2);
    i->addIncoming(begin, before);
    b_.CreateCondBr(cond(i), inside, after);
    b_.SetInsertPoint(inside);
    Value* next = body(i);
    i->addIncoming(next, b_.GetInsertBlock());
    BranchInst* latch = b_.CreateBr(header);
    if (time_lanes_ > 0) {
      // Every loop of a time-lanes kernel is neither unrolled nor vectorized by LLVM: its taps
      // already do eight vectors' multiply-adds a pass, and its other loops (the window from
      // and to the ring, the last few samples) run once a call. LLVM's unrolled and vectorized
      // copies of them doubled the compile time (101 taps, one float32 channel: 59 -> 31 ms
      // cold, the same speed). llvm.loop metadata: a distinct node naming itself, the hints.
      MDNode* disable = MDNode::get(ctx_, MDString::get(ctx_, "llvm.loop.unroll.disable"));
      MDNode* no_vectors = MDNode::get(
          ctx_, {MDString::get(ctx_, "llvm.loop.vectorize.enable"), ConstantAsMetadata::get(b_.getFalse())});
      MDNode* id = MDNode::getDistinct(ctx_, {nullptr, disable, no_vectors});
      id->replaceOperandWith(0, id);
      latch->setMetadata(LLVMContext::MD_loop, id);
    }
    b_.SetInsertPoint(after);
    return i;
  }

  // A counted loop from `begin` while cond(i), stepping by `step`; returns i at the exit.
  Value* loop(Value* begin, int64_t step, const std::function<Value*(Value*)>& cond,
              const std::function<void(Value*)>& body) {
    return repeat(begin, cond, [&](Value* i) {
      body(i);
      return b_.CreateAdd(i, b_.getInt64(step));
    });
  }

  Value* element(Value* base, Type* type, Value* index) {
    return b_.CreateInBoundsGEP(type, base, index);
  }
  Value* load_at(Type* type, Value* base, Value* index) {
    return b_.CreateLoad(type, element(base, type, index));
  }

  // Every coefficient is loaded once, in the entry block, but the taps of FIRs past the
  // transposed form's budget (transposed_firs_), which their loop reads from memory.
  void load_scalar_params() {
    params_.assign(layout_.param_count, nullptr);
    for (std::size_t s = 0; s < chain_.stages.size(); ++s) {
      if (std::holds_alternative<ir::FirFilter>(chain_.stages[s]) && !transposed_firs_[s]) continue;
      int first = layout_.stages[s].param_offset;
      int last = s + 1 < chain_.stages.size() ? layout_.stages[s + 1].param_offset : layout_.param_count;
      for (int i = first; i < last; ++i) params_[i] = load_at(t_, fields_[kParams], b_.getInt64(i));
    }
    for (int d = 0; d < layout_.delay_count; ++d)
      delay_lengths_.push_back(load_at(i64_, fields_[kDelayLengths], b_.getInt64(d)));
  }

  // a * b + c, fused where the target has fast FMA (the same choice everywhere).
  Value* fmuladd(Value* a, Value* b, Value* c) {
    return b_.CreateIntrinsic(Intrinsic::fmuladd, {a->getType()}, {a, b, c});
  }

  Value* splat(Value* scalar, int width) {
    return width == 1 ? scalar : b_.CreateVectorSplat(width, scalar);
  }
  Value* lane(Value* v, int width, int j) {
    return width == 1 ? v : b_.CreateExtractElement(v, static_cast<uint64_t>(j));
  }
  Value* with_lane(Value* v, int width, int j, Value* x) {
    return width == 1 ? x : b_.CreateInsertElement(v, x, static_cast<uint64_t>(j));
  }
  Type* vec(int width) { return width == 1 ? t_ : FixedVectorType::get(t_, width); }
  Type* float_vec(int width) {
    Type* f = b_.getFloatTy();
    return width == 1 ? f : FixedVectorType::get(f, width);
  }

  AllocaInst* entry_alloca(Type* type) {
    Function* f = b_.GetInsertBlock()->getParent();
    IRBuilder<> entry(&f->getEntryBlock(), f->getEntryBlock().begin());
    return entry.CreateAlloca(type);
  }

  // The state slot `slot` of channel c0 + j.
  Value* state_slot(Value* c0, int j, int slot) {
    Value* channel = b_.CreateAdd(c0, b_.getInt64(j));
    Value* index = b_.CreateAdd(b_.CreateMul(channel, b_.getInt64(layout_.state_per_channel)),
                                b_.getInt64(slot));
    return element(fields_[kState], t_, index);
  }
  Value* position_slot(Value* c0, int j, int slot) {
    Value* channel = b_.CreateAdd(c0, b_.getInt64(j));
    Value* index = b_.CreateAdd(
        b_.CreateMul(channel, b_.getInt64(layout_.positions_per_channel())), b_.getInt64(slot));
    return element(fields_[kPositions], i64_, index);
  }

  struct GroupState {
    std::vector<std::pair<AllocaInst*, int>> sections;  // (z register, state slot of lane 0)
    std::vector<std::vector<AllocaInst*>> positions;    // [delay or fir][lane]
    std::vector<std::vector<Value*>> lines;             // [delay][lane]: ring pointers
    std::vector<Value*> in, out;                        // [lane]: channel pointers
    std::vector<std::vector<AllocaInst*>> fir_sums;     // [stage][k - 1]: a FIR's s_k (emit_fir)
    std::vector<Value*> fir_sums_used;                  // [stage]: i1, this call runs the FIR transposed
  };

  // A step of the per-sample pipeline: one section of an sos stage, or a whole other stage.
  struct Step {
    std::size_t stage;
    int section = -1;  // sos: which section of the stage
    int z_index = -1;  // sos: index of this section's z0 in GroupState::sections
  };

  // The state slots a stage keeps in registers across samples (GroupState::sections): two per
  // section, and a dynamics stage's smoothed value and counter.
  static int register_slots(const ir::Stage& stage) {
    if (auto* sos = std::get_if<ir::SosCascade>(&stage)) return 2 * static_cast<int>(sos->sections.size());
    return std::holds_alternative<ir::Dynamics>(stage) ? 2 : 0;
  }

  std::vector<Step> steps() const {
    std::vector<Step> out;
    int z = 0;
    for (std::size_t s = 0; s < chain_.stages.size(); ++s) {
      if (auto* sos = std::get_if<ir::SosCascade>(&chain_.stages[s])) {
        for (std::size_t k = 0; k < sos->sections.size(); ++k, z += 2)
          out.push_back({s, static_cast<int>(k), z});
      } else {
        out.push_back({s, -1, register_slots(chain_.stages[s]) > 0 ? z : -1});
        z += register_slots(chain_.stages[s]);
      }
    }
    return out;
  }

  // The lanes of a group that hold channels; the rest (a partial group, live_lanes_ set) read
  // the last channel's input and state and write nothing.
  int live(int width) const { return live_lanes_ > 0 ? live_lanes_ : width; }

  void emit_group(Value* c0, int width) {
    Type* vt = vec(width);
    GroupState g;
    for (int j = 0; j < width; ++j) {
      Value* channel = b_.CreateAdd(c0, b_.getInt64(std::min(j, live(width) - 1)));
      g.in.push_back(load_at(ptr_, fields_[kIn], channel));
      g.out.push_back(j < live(width) ? load_at(ptr_, fields_[kOut], channel) : nullptr);
    }
    // Section state into registers (allocas that SROA turns into loop-carried values).
    for (std::size_t s = 0; s < chain_.stages.size(); ++s)
        for (int slot = 0; slot < register_slots(chain_.stages[s]); ++slot) {
          AllocaInst* z = entry_alloca(vt);
          Value* v = PoisonValue::get(vt);
          for (int j = 0; j < width; ++j)
            v = with_lane(v, width, j,
                          b_.CreateLoad(t_, state_slot(c0, std::min(j, live(width) - 1),
                                                       layout_.stages[s].state_offset + slot)));
          b_.CreateStore(v, z);
          g.sections.emplace_back(z, layout_.stages[s].state_offset + slot);
        }
    for (int p = 0; p < layout_.positions_per_channel(); ++p) {
      std::vector<AllocaInst*> per_lane;
      for (int j = 0; j < width; ++j) {
        AllocaInst* a = entry_alloca(i64_);
        b_.CreateStore(b_.CreateLoad(i64_, position_slot(c0, j, p)), a);
        per_lane.push_back(a);
      }
      g.positions.push_back(per_lane);
    }
    g.fir_sums.resize(chain_.stages.size());
    g.fir_sums_used.resize(chain_.stages.size());
    for (std::size_t s = 0; s < chain_.stages.size(); ++s)
      if (auto* fir = std::get_if<ir::FirFilter>(&chain_.stages[s]); fir && transposed_firs_[s] && !time_lanes_) {
        g.fir_sums_used[s] = b_.CreateICmpSGE(fields_[kSamples], b_.getInt64(static_cast<int64_t>(fir->taps.size())));
        g.fir_sums[s] = fir_sums_from_ring(*fir, layout_.stages[s], width, c0, g.fir_sums_used[s], g);
      }
    for (int d = 0; d < layout_.delay_count; ++d) {
      std::vector<Value*> per_lane;
      for (int j = 0; j < width; ++j) {
        Value* channel = b_.CreateAdd(c0, b_.getInt64(j));
        Value* index = b_.CreateAdd(b_.CreateMul(channel, b_.getInt64(layout_.delay_count)), b_.getInt64(d));
        per_lane.push_back(load_at(ptr_, fields_[kDelayLines], index));
      }
      g.lines.push_back(per_lane);
    }

    std::vector<Step> all = steps();
    Value* samples = fields_[kSamples];
    if (!wavefront_ || all.size() < 2) {
      auto one_sample = [&](Value* n) {
        Value* v = gather(g, width, n);
        for (const Step& step : all) v = emit_step(step, v, nullptr, width, c0, g);
        scatter(g, width, n, v);
      };
      // Tiles only where a fused loop's line is read and written: there they take Freeverb
      // (8 ch, 12 fused loops) from 122 to 67-80 ms per 20 s; on W1's feed-forward chain they
      // gain 12% (32.5 -> 28.5 ms) but cost a third more compile time (94 -> 126 ms).
      if (time_lanes_) {
        // Whole vectors of samples, then the last few one at a time.
        Value* tail = emit_time_lanes(all, g, c0);
        loop(tail, 1, [&](Value* n) { return b_.CreateICmpSLT(n, samples); }, one_sample);
      } else if (width == 1 || !ir::has_loop(chain_.stages)) {
        loop(b_.getInt64(0), 1, [&](Value* n) { return b_.CreateICmpSLT(n, samples); }, one_sample);
      } else {
        // Whole tiles while they fit, then single samples until they fit again (after a line
        // wraps) or the signal ends.
        TileMemory tiles = tile_memory(width);
        repeat(b_.getInt64(0), [&](Value* n) { return b_.CreateICmpSLT(n, samples); },
               [&](Value* n) {
                 n = loop(n, width, [&](Value* at) { return tile_fits(g, width, at); },
                          [&](Value* at) { emit_tile(all, g, width, c0, tiles, at); });
                 return loop(n, 1,
                             [&](Value* at) {
                               return b_.CreateAnd(b_.CreateICmpSLT(at, samples), b_.CreateNot(tile_fits(g, width, at)));
                             },
                             one_sample);
               });
      }
    } else {
      emit_wavefront(all, g, width, c0);
    }

    for (auto [z, slot] : g.sections) {
      Value* v = b_.CreateLoad(vt, z);
      for (int j = 0; j < live(width); ++j) b_.CreateStore(lane(v, width, j), state_slot(c0, j, slot));
    }
    for (int p = 0; p < layout_.positions_per_channel(); ++p)
      for (int j = 0; j < width; ++j)
        b_.CreateStore(b_.CreateLoad(i64_, g.positions[p][j]), position_slot(c0, j, p));
  }

  // Signals and lines are arrays of scalars: a vector of them is aligned as one of them.
  Align element_align(Type* scalar) { return Align(scalar->getPrimitiveSizeInBits() / 8); }

  // The transpose of `rows` (W vectors of W elements, W a power of two): log2(W) rounds of
  // interleaving row i with row i + W/2, which LLVM lowers to unpack and permute shuffles.
  std::vector<Value*> transpose(std::vector<Value*> rows) {
    const int w = static_cast<int>(rows.size());
    std::vector<int> low, high;
    for (int k = 0; k < w / 2; ++k) {
      low.insert(low.end(), {k, k + w});
      high.insert(high.end(), {k + w / 2, k + w / 2 + w});
    }
    for (int round = 1; round < w; round *= 2) {
      std::vector<Value*> next(w);
      for (int i = 0; i < w / 2; ++i) {
        next[2 * i] = b_.CreateShuffleVector(rows[i], rows[i + w / 2], low);
        next[2 * i + 1] = b_.CreateShuffleVector(rows[i], rows[i + w / 2], high);
      }
      rows = std::move(next);
    }
    return rows;
  }

  // Tiles of W samples x W lanes (W = width): each lane's W samples in one vector load, turned
  // into W lane vectors by a transpose, and back the same way, instead of a scalar load and
  // insert per lane and sample (and an extract and store). A fused loop's line is read and
  // written the same way, a tile at a time: where the tile's W cells of a line do not wrap
  // (tile_fits), they were all written before the tile (the line holds at least W cells), and
  // each is read before the same sample writes it. The lane vectors pass through stack
  // arrays, so the steps are emitted once, in a loop over the tile's samples, with the same
  // arithmetic per sample as the sample loop.
  struct TileMemory {
    AllocaInst *in = nullptr, *out = nullptr;
  };
  TileMemory tile_memory(int width) {
    ArrayType* tile_t = ArrayType::get(vec(width), width);
    tile_lines_in_.assign(layout_.delay_count, nullptr);
    tile_lines_out_.assign(layout_.delay_count, nullptr);
    for (std::size_t s = 0; s < chain_.stages.size(); ++s)
      if (std::holds_alternative<ir::LoopRead>(chain_.stages[s])) {
        tile_lines_in_[layout_.stages[s].delay_index] = entry_alloca(tile_t);
        tile_lines_out_[layout_.stages[s].delay_index] = entry_alloca(tile_t);
      }
    return {entry_alloca(tile_t), entry_alloca(tile_t)};
  }

  // Whether a whole tile from sample n fits in the signal and in every fused loop's line
  // without wrapping.
  Value* tile_fits(const GroupState& g, int width, Value* n) {
    Value* fits = b_.CreateICmpSLE(b_.CreateAdd(n, b_.getInt64(width)), fields_[kSamples]);
    for (int d = 0; d < layout_.delay_count; ++d) {
      if (!tile_lines_in_[d]) continue;
      for (int j = 0; j < width; ++j) {
        Value* pos = b_.CreateLoad(i64_, g.positions[d][j]);
        fits = b_.CreateAnd(fits, b_.CreateICmpSLE(b_.CreateAdd(pos, b_.getInt64(width)), delay_lengths_[d]));
      }
    }
    return fits;
  }

  // Whether the samples of a tile are independent of each other: every stage is a fused
  // loop's read or write (whose line, at least a tile long, was written before the tile) or
  // memoryless (gain, clip, tanh), as in Freeverb's allpasses. Such a tile runs a channel's W
  // samples as one vector, straight from and to memory: no transposes, the same arithmetic.
  bool tile_samples_independent() const {
    return std::all_of(chain_.stages.begin(), chain_.stages.end(), [](const ir::Stage& stage) {
      return std::holds_alternative<ir::LoopRead>(stage) || std::holds_alternative<ir::LoopWrite>(stage) ||
             std::holds_alternative<ir::Gain>(stage) || std::holds_alternative<ir::Clip>(stage) ||
             std::holds_alternative<ir::Tanh>(stage);
    });
  }

  // The tile a channel at a time when its samples are independent (tile_samples_independent):
  // lane j's W samples are one vector through every step (tile_row_ tells loop_read and
  // loop_write which channel's line to use), then every line moves on by W.
  void emit_tile_rows(const std::vector<Step>& all, GroupState& g, int width, Value* c0, Value* n) {
    Type* row_t = FixedVectorType::get(sample_t_, width);
    for (int j = 0; j < width; ++j) {
      tile_row_ = j;
      Value* v = b_.CreateAlignedLoad(row_t, element(g.in[j], sample_t_, n), element_align(sample_t_));
      if (sample_t_ != t_) v = b_.CreateFPExt(v, vec(width));
      for (const Step& step : all) v = emit_step(step, v, nullptr, width, c0, g);
      b_.CreateAlignedStore(sample_t_ == t_ ? v : b_.CreateFPTrunc(v, row_t), element(g.out[j], sample_t_, n),
                            element_align(sample_t_));
    }
    tile_row_ = -1;
    advance_tile_lines(g, width);
  }

  void advance_tile_lines(GroupState& g, int width) {
    for (int d = 0; d < layout_.delay_count; ++d) {
      if (!tile_lines_out_[d]) continue;
      for (int j = 0; j < width; ++j) {
        Value* next = b_.CreateAdd(b_.CreateLoad(i64_, g.positions[d][j]), b_.getInt64(width));
        b_.CreateStore(b_.CreateSelect(b_.CreateICmpSGE(next, delay_lengths_[d]), b_.getInt64(0), next),
                       g.positions[d][j]);
      }
    }
  }

  void emit_tile(const std::vector<Step>& all, GroupState& g, int width, Value* c0, const TileMemory& tiles, Value* n) {
    if (tile_samples_independent()) return emit_tile_rows(all, g, width, c0, n);
    Type* vt = vec(width);
    Type* row_t = FixedVectorType::get(sample_t_, width);
    ArrayType* tile_t = ArrayType::get(vt, width);
    auto slot = [&](AllocaInst* tile, Value* t) { return b_.CreateInBoundsGEP(tile_t, tile, {b_.getInt64(0), t}); };
    auto to_tile = [&](std::vector<Value*> rows, AllocaInst* tile) {
      rows = transpose(std::move(rows));
      for (int t = 0; t < width; ++t) b_.CreateStore(rows[t], slot(tile, b_.getInt64(t)));
    };
    auto from_tile = [&](AllocaInst* tile) {
      std::vector<Value*> columns;
      for (int t = 0; t < width; ++t) columns.push_back(b_.CreateLoad(vt, slot(tile, b_.getInt64(t))));
      return transpose(std::move(columns));
    };
    std::vector<Value*> rows;
    for (int j = 0; j < width; ++j) {
      Value* x = b_.CreateAlignedLoad(row_t, element(g.in[j], sample_t_, n), element_align(sample_t_));
      rows.push_back(sample_t_ == t_ ? x : b_.CreateFPExt(x, vt));
    }
    to_tile(rows, tiles.in);
    for (int d = 0; d < layout_.delay_count; ++d) {
      if (!tile_lines_in_[d]) continue;
      std::vector<Value*> cells;
      for (int j = 0; j < width; ++j) {
        Value* pos = b_.CreateLoad(i64_, g.positions[d][j]);
        cells.push_back(b_.CreateAlignedLoad(vt, element(g.lines[d][j], t_, pos), element_align(t_)));
      }
      to_tile(cells, tile_lines_in_[d]);
    }
    loop(b_.getInt64(0), 1, [&](Value* t) { return b_.CreateICmpSLT(t, b_.getInt64(width)); },
         [&](Value* t) {
           tile_sample_ = t;
           Value* v = b_.CreateLoad(vt, slot(tiles.in, t));
           for (const Step& step : all) v = emit_step(step, v, nullptr, width, c0, g);
           b_.CreateStore(v, slot(tiles.out, t));
           tile_sample_ = nullptr;
         });
    for (int d = 0; d < layout_.delay_count; ++d) {
      if (!tile_lines_out_[d]) continue;
      std::vector<Value*> cells = from_tile(tile_lines_out_[d]);
      for (int j = 0; j < width; ++j) {
        Value* pos = b_.CreateLoad(i64_, g.positions[d][j]);
        b_.CreateAlignedStore(cells[j], element(g.lines[d][j], t_, pos), element_align(t_));
      }
    }
    advance_tile_lines(g, width);
    std::vector<Value*> out_rows = from_tile(tiles.out);
    for (int j = 0; j < width; ++j) {
      Value* y = sample_t_ == t_ ? out_rows[j] : b_.CreateFPTrunc(out_rows[j], row_t);
      b_.CreateAlignedStore(y, element(g.out[j], sample_t_, n), element_align(sample_t_));
    }
  }

  Value* gather(const GroupState& g, int width, Value* n) {
    Value* v = PoisonValue::get(vec(width));
    for (int j = 0; j < width; ++j) {
      Value* x = load_at(sample_t_, g.in[j], n);
      v = with_lane(v, width, j, sample_t_ == t_ ? x : b_.CreateFPExt(x, t_));
    }
    return v;
  }
  void scatter(const GroupState& g, int width, Value* n, Value* v) {
    for (int j = 0; j < live(width); ++j) {
      Value* y = lane(v, width, j);
      b_.CreateStore(sample_t_ == t_ ? y : b_.CreateFPTrunc(y, sample_t_), element(g.out[j], sample_t_, n));
    }
  }

  // Runs `emit` only when `condition` holds; returns its value, or `otherwise`.
  Value* when(Value* condition, Type* type, Value* otherwise, const std::function<Value*()>& emit) {
    Function* f = b_.GetInsertBlock()->getParent();
    BasicBlock* before = b_.GetInsertBlock();
    BasicBlock* then = BasicBlock::Create(ctx_, "then", f);
    BasicBlock* merge = BasicBlock::Create(ctx_, "merge", f);
    b_.CreateCondBr(condition, then, merge);
    b_.SetInsertPoint(then);
    Value* value = emit();
    BasicBlock* then_end = b_.GetInsertBlock();
    b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
    if (!type) return nullptr;
    PHINode* phi = b_.CreatePHI(type, 2);
    phi->addIncoming(value, then_end);
    phi->addIncoming(otherwise, before);
    return phi;
  }

  // The section wavefront, generalized to every step: in iteration n, step k works on sample
  // n - k, taking step k-1's result of the previous iteration from a pipeline register. The
  // steps of one iteration are then independent, so their latencies overlap instead of
  // adding up. The first and last S - 1 iterations (S steps) run with each step predicated
  // on its sample being inside the signal, so state and rings see exactly the real samples.
  void emit_wavefront(const std::vector<Step>& all, GroupState& g, int width, Value* c0) {
    int64_t count = static_cast<int64_t>(all.size());
    std::vector<AllocaInst*> registers;
    for (int64_t k = 0; k + 1 < count; ++k) {
      registers.push_back(entry_alloca(vec(width)));
      b_.CreateStore(Constant::getNullValue(vec(width)), registers.back());
    }
    Value* samples = fields_[kSamples];
    auto iteration = [&](Value* n, bool predicated) {
      for (int64_t k = count - 1; k >= 0; --k) {
        Value* sample = b_.CreateSub(n, b_.getInt64(k));
        Value* valid = predicated ? b_.CreateAnd(b_.CreateICmpSGE(sample, b_.getInt64(0)),
                                                 b_.CreateICmpSLT(sample, samples))
                                  : nullptr;
        Value* input = k > 0 ? b_.CreateLoad(vec(width), registers[k - 1])
                       : predicated ? when(valid, vec(width), Constant::getNullValue(vec(width)),
                                           [&] { return gather(g, width, n); })
                                    : gather(g, width, n);
        Value* result = emit_step(all[k], input, valid, width, c0, g);
        if (k + 1 < count) {
          b_.CreateStore(result, registers[k]);
        } else if (predicated) {
          when(valid, nullptr, nullptr, [&]() -> Value* {
            scatter(g, width, sample, result);
            return nullptr;
          });
        } else {
          scatter(g, width, sample, result);
        }
      }
    };
    Value* fill = b_.getInt64(count - 1);
    loop(b_.getInt64(0), 1, [&](Value* n) { return b_.CreateICmpSLT(n, fill); },
         [&](Value* n) { iteration(n, true); });
    loop(fill, 1, [&](Value* n) { return b_.CreateICmpSLT(n, samples); },
         [&](Value* n) { iteration(n, false); });
    Value* drain_start = b_.CreateSelect(b_.CreateICmpSGT(samples, fill), samples, fill);
    Value* drain_end = b_.CreateAdd(samples, fill);
    loop(drain_start, 1, [&](Value* n) { return b_.CreateICmpSLT(n, drain_end); },
         [&](Value* n) { iteration(n, true); });
  }

  // One step on value `v`. With `valid` (an i1), a step whose sample lies outside the signal
  // leaves its state, ring and position unchanged; its result is then not used.
  Value* emit_step(const Step& step, Value* v, Value* valid, int width, Value* c0, GroupState& g) {
    const StageLayout& at = layout_.stages[step.stage];
    auto param = [&](int i) { return splat(params_[at.param_offset + i], width); };
    auto keep_unless_valid = [&](Value* updated, Value* old) {
      return valid ? b_.CreateSelect(valid, updated, old) : updated;
    };
    return std::visit(
        [&](const auto& stage) -> Value* {
          using P = std::decay_t<decltype(stage)>;
          if constexpr (std::is_same_v<P, ir::SosCascade>) {
            // Transposed direct form II, as sosfilt.
            int c = 5 * step.section;
            AllocaInst* z0 = g.sections[step.z_index].first;
            AllocaInst* z1 = g.sections[step.z_index + 1].first;
            Value* s0 = b_.CreateLoad(vec(width), z0);
            Value* s1 = b_.CreateLoad(vec(width), z1);
            Value* y = fmuladd(param(c), v, s0);
            Value* n0 = fmuladd(param(c + 1), v, fmuladd(b_.CreateFNeg(param(c + 3)), y, s1));
            Value* n1 = fmuladd(b_.CreateFNeg(param(c + 4)), y, b_.CreateFMul(param(c + 2), v));
            b_.CreateStore(keep_unless_valid(n0, s0), z0);
            b_.CreateStore(keep_unless_valid(n1, s1), z1);
            return y;
          } else if constexpr (std::is_same_v<P, ir::Gain>) {
            return b_.CreateFMul(v, param(0));
          } else if constexpr (std::is_same_v<P, ir::Clip>) {
            // std::clamp's order of comparisons, so NaN passes through as in the interpreter.
            Value* lo = param(0);
            Value* hi = param(1);
            return b_.CreateSelect(b_.CreateFCmpOLT(v, lo), lo,
                                   b_.CreateSelect(b_.CreateFCmpOLT(hi, v), hi, v));
          } else if constexpr (std::is_same_v<P, ir::Tanh>) {
            if (t_->isFloatTy()) return fast_tanh(v, width);
            // A float32 signal in a float64-state chain: its tanh needs no more than float32
            // either (2e-7, below the 1e-6 of float64 quality, docs/errors.md).
            if (sample_t_->isFloatTy())
              return b_.CreateFPExt(fast_tanh(b_.CreateFPTrunc(v, float_vec(width)), width), vec(width));
            if (Value* y = vector_libm("tanh", v, width)) return y;
            FunctionCallee f = m_.getOrInsertFunction("tanh", FunctionType::get(t_, {t_}, false));
            for (int j = 0; j < live(width); ++j) v = with_lane(v, width, j, b_.CreateCall(f, {lane(v, width, j)}));
            return v;
          } else if constexpr (std::is_same_v<P, ir::Delay>) {
            Value* length = delay_lengths_[at.delay_index];
            Value* none = b_.CreateICmpEQ(length, b_.getInt64(0));
            for (int j = 0; j < width; ++j) {
              AllocaInst* pos_slot = g.positions[at.delay_index][j];
              Value* pos = b_.CreateLoad(i64_, pos_slot);
              Value* cell = element(g.lines[at.delay_index][j], t_, pos);
              Value* old = b_.CreateLoad(t_, cell);
              Value* x = lane(v, width, j);
              b_.CreateStore(keep_unless_valid(x, old), cell);
              Value* next = b_.CreateAdd(pos, b_.getInt64(1));
              next = b_.CreateSelect(b_.CreateICmpSGE(next, length), b_.getInt64(0), next);
              b_.CreateStore(keep_unless_valid(next, pos), pos_slot);
              v = with_lane(v, width, j, b_.CreateSelect(none, x, old));
            }
            return v;
          } else if constexpr (std::is_same_v<P, ir::FirFilter>) {
            // Time lanes' last samples (fewer than a vector) sum the ring in the transposed
            // form's order, which their vectors keep (emit_time_lanes).
            if (time_lanes_) return emit_fir_loop(stage, at, v, valid, width, c0, g, true);
            if (!transposed_firs_[step.stage]) return emit_fir_loop(stage, at, v, valid, width, c0, g, false);
            return emit_fir(stage, at, g.fir_sums[step.stage], g.fir_sums_used[step.stage], v, valid, width, c0, g);
          } else if constexpr (std::is_same_v<P, ir::Dynamics>) {
            return emit_dynamics(stage, at, step, v, valid, width, c0, g);
          } else if constexpr (std::is_same_v<P, ir::LoopRead>) {
            // The line's sample from `amount` ago; the input waits for the loop_write.
            loop_input_ = v;
            if (tile_row_ >= 0) {  // a channel's W samples (emit_tile_rows)
              Value* pos = b_.CreateLoad(i64_, g.positions[at.delay_index][tile_row_]);
              loop_read_ = b_.CreateAlignedLoad(vec(width), element(g.lines[at.delay_index][tile_row_], t_, pos),
                                                element_align(t_));
              return loop_read_;
            }
            if (tile_sample_) {  // the tile's cells, read before it (emit_tiles)
              loop_read_ = b_.CreateLoad(vec(width), b_.CreateInBoundsGEP(ArrayType::get(vec(width), width),
                                                                           tile_lines_in_[at.delay_index],
                                                                           {b_.getInt64(0), tile_sample_}));
              return loop_read_;
            }
            Value* w = v;
            for (int j = 0; j < width; ++j) {
              Value* pos = b_.CreateLoad(i64_, g.positions[at.delay_index][j]);
              w = with_lane(w, width, j, b_.CreateLoad(t_, element(g.lines[at.delay_index][j], t_, pos)));
            }
            loop_read_ = w;
            return w;
          } else if constexpr (std::is_same_v<P, ir::LoopWrite>) {
            // s = input_weight x + loop_weight v into the cell just read, and on to the next.
            Value* s = b_.CreateFAdd(b_.CreateFMul(param(0), loop_input_), b_.CreateFMul(param(1), v));
            if (tile_row_ >= 0) {
              Value* pos = b_.CreateLoad(i64_, g.positions[at.delay_index][tile_row_]);
              b_.CreateAlignedStore(s, element(g.lines[at.delay_index][tile_row_], t_, pos), element_align(t_));
              return loop_output(stage, s, param);
            }
            if (tile_sample_) {  // written after the tile (emit_tiles)
              b_.CreateStore(s, b_.CreateInBoundsGEP(ArrayType::get(vec(width), width), tile_lines_out_[at.delay_index],
                                                     {b_.getInt64(0), tile_sample_}));
              return loop_output(stage, s, param);
            }
            Value* length = delay_lengths_[at.delay_index];
            for (int j = 0; j < width; ++j) {
              AllocaInst* pos_slot = g.positions[at.delay_index][j];
              Value* pos = b_.CreateLoad(i64_, pos_slot);
              Value* cell = element(g.lines[at.delay_index][j], t_, pos);
              b_.CreateStore(keep_unless_valid(lane(s, width, j), b_.CreateLoad(t_, cell)), cell);
              Value* next = b_.CreateAdd(pos, b_.getInt64(1));
              next = b_.CreateSelect(b_.CreateICmpSGE(next, length), b_.getInt64(0), next);
              b_.CreateStore(keep_unless_valid(next, pos), pos_slot);
            }
            return loop_output(stage, s, param);
          }
        },
        chain_.stages[step.stage]);
  }

  // What a loop_write outputs: the mix s or the line's sample, and with dry_mix that times
  // wet_weight plus dry_weight times the loop's input (`param`: the stage's parameters).
  template <class Param>
  Value* loop_output(const ir::LoopWrite& stage, Value* s, Param param) {
    Value* out = stage.output_read ? loop_read_ : s;
    if (!stage.dry_mix) return out;
    return fmuladd(param(3), loop_input_, b_.CreateFMul(param(2), out));
  }

  Value* unary(Intrinsic::ID id, Value* v) { return b_.CreateUnaryIntrinsic(id, v); }

  // Float32 log2 and exp2 on whole vectors, for dynamics (the C library's logf and expf are
  // scalar calls, one per lane, and cost more than the rest of a compressor). Bounds, measured
  // against float64 (tests/api/api_dynamics_test.cpp): log2 within 1.2e-7 absolute for normal
  // inputs, exp2 within 2.4e-7 relative; a compressor's gain within 1e-6 of the float64
  // reference's at any level (docs/fx-language.md). Infinities and NaN pass as the C
  // library's do; exp2 below 2^-126 is 0 (the C library gives a subnormal).
  Value* fast_log2(Value* a, int width) {
    Type* it = width == 1 ? static_cast<Type*>(b_.getInt32Ty()) : FixedVectorType::get(b_.getInt32Ty(), width);
    Type* vt = float_vec(width);
    auto f = [&](double x) { return ConstantFP::get(vt, x); };
    auto i = [&](uint32_t x) { return ConstantInt::get(it, x); };
    Value* bits = b_.CreateBitCast(a, it);
    Value* e = b_.CreateSIToFP(b_.CreateSub(b_.CreateLShr(bits, i(23)), i(127)), vt);
    Value* m = b_.CreateBitCast(b_.CreateOr(b_.CreateAnd(bits, i(0x7FFFFF)), i(0x3F800000)), vt);  // [1, 2)
    Value* high = b_.CreateFCmpOGT(m, f(1.4142135623730951));
    m = b_.CreateSelect(high, b_.CreateFMul(m, f(0.5)), m);  // [sqrt(1/2), sqrt(2)]
    e = b_.CreateSelect(high, b_.CreateFAdd(e, f(1)), e);
    // log2(m) = 2/ln2 atanh(t), t = (m - 1) / (m + 1), |t| <= 0.172: the odd series to t^9.
    Value* t = b_.CreateFDiv(b_.CreateFSub(m, f(1)), b_.CreateFAdd(m, f(1)));
    Value* t2 = b_.CreateFMul(t, t);
    const double k = 2 / std::log(2.0);
    Value* p = f(k / 9);
    for (double c : {k / 7, k / 5, k / 3, k}) p = fmuladd(p, t2, f(c));
    Value* result = fmuladd(t, p, e);
    Value* special = b_.CreateFCmpUNO(a, a);  // NaN
    special = b_.CreateOr(special, b_.CreateFCmpOEQ(a, f(HUGE_VAL)));
    return b_.CreateSelect(special, a, result);
  }

  Value* fast_exp2(Value* u, int width) {
    Type* it = width == 1 ? static_cast<Type*>(b_.getInt32Ty()) : FixedVectorType::get(b_.getInt32Ty(), width);
    Type* vt = float_vec(width);
    auto f = [&](double x) { return ConstantFP::get(vt, x); };
    Value* under = b_.CreateFCmpOLT(u, f(-126));
    Value* over = b_.CreateFCmpOGT(u, f(128));
    Value* clamped = b_.CreateSelect(under, f(-126), b_.CreateSelect(over, f(127), u));
    Value* whole = unary(Intrinsic::rint, clamped);
    Value* x = b_.CreateFMul(b_.CreateFSub(clamped, whole), f(std::log(2.0)));  // |x| <= ln2 / 2
    // e^x, Taylor to x^7: the remainder is below 6e-9 on |x| <= 0.347.
    Value* p = f(1.0 / 5040);
    for (double c : {1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0}) p = fmuladd(p, x, f(c));
    Value* scale = b_.CreateBitCast(
        b_.CreateShl(b_.CreateAdd(b_.CreateFPToSI(whole, it), ConstantInt::get(it, 127)), ConstantInt::get(it, 23)), vt);
    Value* result = b_.CreateFMul(p, scale);
    result = b_.CreateSelect(under, f(0), b_.CreateSelect(over, f(HUGE_VAL), result));
    return b_.CreateSelect(b_.CreateFCmpUNO(u, u), u, result);
  }

  // Float32 tanh on whole vectors (the C library's tanhf is a scalar call per lane: a
  // saturation stage cost more than the 8-lane filter before it). |x| < 0.625: x + x^3 P(x^2),
  // P a least-squares fit for relative error (4.4e-9 in exact arithmetic); above:
  // 1 - 2 / (e^(2|x|) + 1) with fast_exp2, and x's sign. Bound, measured against float64 on
  // a dense grid (tests/api/api_program_test.cpp): within 2e-7 relative. NaN stays NaN,
  // +-infinity gives +-1 and +-0 stays +-0, as the C library's (subnormal inputs are zeros
  // here: kernels run with denormals off, run_graph.cpp).
  Value* fast_tanh(Value* x, int width) {
    Type* vt = float_vec(width);
    auto f = [&](double c) { return ConstantFP::get(vt, c); };
    Value* a = unary(Intrinsic::fabs, x);
    Value* x2 = b_.CreateFMul(x, x);
    Value* p = f(-0.005705016665160656);
    for (double c : {0.02063911408185959, -0.053739722818136215, 0.13331441581249237, -0.3333328068256378})
      p = fmuladd(p, x2, f(c));
    Value* small = fmuladd(b_.CreateFMul(x, x2), p, x);
    Value* e = fast_exp2(b_.CreateFMul(a, f(2 / std::log(2.0))), width);
    Value* large = b_.CreateFSub(f(1), b_.CreateFDiv(f(2), b_.CreateFAdd(e, f(1))));
    // x's sign on both: tanh is odd, and the polynomial alone would turn -0 into +0.
    return b_.CreateBinaryIntrinsic(Intrinsic::copysign, b_.CreateSelect(b_.CreateFCmpOLT(a, f(0.625)), small, large),
                                    x);
  }

  // 20 log10(a) and 10^(u / 20), fast in float32, the C library's in float64 (its vector
  // functions where it has them, vector_libm).
  Value* decibels(Value* a, int width) {
    if (!t_->isFloatTy()) {
      Value* log = vector_libm("log10", a, width);
      return b_.CreateFMul(ConstantFP::get(vec(width), 20), log ? log : unary(Intrinsic::log10, a));
    }
    return b_.CreateFMul(ConstantFP::get(vec(width), 20 * std::log10(2.0)), fast_log2(a, width));
  }
  Value* from_decibels(Value* u, int width) {
    if (!t_->isFloatTy()) {
      Value* e = b_.CreateFMul(u, ConstantFP::get(vec(width), std::log(10.0) / 20));
      Value* y = vector_libm("exp", e, width);
      return y ? y : unary(Intrinsic::exp, e);
    }
    return fast_exp2(b_.CreateFMul(u, ConstantFP::get(vec(width), std::log2(10.0) / 20)), width);
  }

  // A float64 `function` of libmvec (codegen/vector_math.h) on `v`'s lanes: one call for
  // the host's vector of float64s, where the C library's scalar function is a call per lane.
  // A narrower `v` (one channel, the remainder) fills the vector with its first lane and
  // calls the same function, so a channel gets the same bits in lanes as alone. Null where
  // the host's libmvec lacks it; the caller then calls the scalar C library.
  Value* vector_libm(const char* function, Value* v, int width) {
    const int lanes = passes::host_target().lanes(DType::f64);
    const std::string symbol = libmvec_symbol(function, lanes);
    if (symbol.empty() || !t_->isDoubleTy() || width > lanes) return nullptr;
    auto* vt = FixedVectorType::get(t_, static_cast<unsigned>(lanes));
    FunctionCallee f = m_.getOrInsertFunction(symbol, FunctionType::get(vt, {vt}, false));
    Value* x = b_.CreateVectorSplat(lanes, lane(v, width, 0));
    for (int j = 1; j < width; ++j) x = b_.CreateInsertElement(x, lane(v, width, j), static_cast<uint64_t>(j));
    Value* y = b_.CreateCall(f, {x});
    if (width == lanes) return y;
    Value* out = width == 1 ? nullptr : PoisonValue::get(vec(width));
    for (int j = 0; j < width; ++j) {
      Value* yj = b_.CreateExtractElement(y, static_cast<uint64_t>(j));
      out = width == 1 ? yj : b_.CreateInsertElement(out, yj, static_cast<uint64_t>(j));
    }
    return out;
  }

  // The equations of docs/fx-language.md ("Dynamics"), on a vector of channels; the smoothed
  // value and the gate's counter live in registers across samples, the lookahead's rings in
  // the state. Comparisons are written as the interpreter's std::max and ternaries are, so a
  // NaN takes the same path.
  Value* emit_dynamics(const ir::Dynamics& p, const StageLayout& at, const Step& step, Value* v, Value* valid,
                       int width, Value* c0, GroupState& g) {
    using T = design::DynamicsType;
    Type* vt = vec(width);
    auto param = [&](int i) { return splat(params_[at.param_offset + i], width); };
    auto constant = [&](double x) { return ConstantFP::get(vt, x); };
    auto keep_unless_valid = [&](Value* updated, Value* old) {
      return valid ? b_.CreateSelect(valid, updated, old) : updated;
    };
    AllocaInst* smoothed = g.sections[step.z_index].first;
    AllocaInst* counter = g.sections[step.z_index + 1].first;
    Value* y = b_.CreateLoad(vt, smoothed);
    // alpha y + (1 - alpha) target, alpha_A while `attacking`, else alpha_R.
    auto smooth = [&](Value* target, Value* attacking) {
      Value* a = b_.CreateSelect(attacking, param(codegen::kDynAttack), param(codegen::kDynRelease));
      return fmuladd(a, y, b_.CreateFMul(b_.CreateFSub(constant(1), a), target));
    };
    auto finish = [&](Value* next) { b_.CreateStore(keep_unless_valid(next, y), smoothed); };

    if (p.type == T::envelope) {
      bool peak = p.detector == design::Detector::peak;
      Value* e = peak ? unary(Intrinsic::fabs, v) : b_.CreateFMul(v, v);
      Value* next = smooth(e, b_.CreateFCmpOGT(e, y));
      finish(next);
      return peak ? next : unary(Intrinsic::sqrt, next);
    }

    Value* magnitude = unary(Intrinsic::fabs, v);
    magnitude = b_.CreateSelect(b_.CreateFCmpOLT(magnitude, constant(1e-10)), constant(1e-10), magnitude);
    Value* xg = decibels(magnitude, width);
    Value* d = b_.CreateFSub(xg, param(codegen::kDynThreshold));
    Value* two_d = b_.CreateFMul(constant(2), d);
    Value* w = param(codegen::kDynKnee);
    Value* slope = param(codegen::kDynSlope);
    Value* in_knee = b_.CreateAnd(b_.CreateFCmpOGT(w, constant(0)),
                                  b_.CreateFCmpOLE(unary(Intrinsic::fabs, two_d), w));
    // slope (d + offset)^2 / (2 W): the quadratic knee.
    auto knee = [&](Value* offset) {
      Value* u = b_.CreateFAdd(d, offset);
      return b_.CreateFDiv(b_.CreateFMul(slope, b_.CreateFMul(u, u)), b_.CreateFMul(constant(2), w));
    };
    Value* half_w = b_.CreateFMul(constant(0.5), w);
    Value* input = v;
    Value* next = nullptr;
    switch (p.type) {
      case T::compressor: {
        Value* target = b_.CreateSelect(b_.CreateFCmpOGT(two_d, w), b_.CreateFMul(slope, d),
                                        b_.CreateSelect(in_knee, knee(half_w), constant(0)));
        next = smooth(target, b_.CreateFCmpOGT(target, y));
        break;
      }
      case T::expander: {
        Value* target = b_.CreateSelect(b_.CreateFCmpOLT(two_d, b_.CreateFNeg(w)), b_.CreateFMul(slope, b_.CreateFNeg(d)),
                                        b_.CreateSelect(in_knee, knee(b_.CreateFNeg(half_w)), constant(0)));
        next = smooth(target, b_.CreateFCmpOLT(target, y));
        break;
      }
      case T::gate: {
        Value* h = b_.CreateLoad(vt, counter);
        Value* hold = param(codegen::kDynHold);
        Value* up = b_.CreateFAdd(h, constant(1));
        Value* cap = b_.CreateFAdd(hold, constant(1));
        Value* counted = b_.CreateSelect(b_.CreateFCmpOLT(cap, up), cap, up);
        Value* h_next = b_.CreateSelect(b_.CreateFCmpOGE(xg, param(codegen::kDynThreshold)), constant(0), counted);
        b_.CreateStore(keep_unless_valid(h_next, h), counter);
        Value* target = b_.CreateSelect(b_.CreateFCmpOLE(h_next, hold), constant(0), param(codegen::kDynClosed));
        next = smooth(target, b_.CreateFCmpOLT(target, y));
        break;
      }
      case T::limiter: {
        // The interpreter's z = max(0, max(d, 0)) (std::max both times) is d where d > 0, else
        // +0, a NaN included: one select says it. (Written as its two selects, LLVM 19 folded
        // the second away, and a NaN level then stuck in the smoothed reduction.)
        Value* target = b_.CreateSelect(b_.CreateFCmpOGT(d, constant(0)), d, constant(0));
        if (at.ring_index >= 0) std::tie(target, input) = emit_lookahead(at, target, v, valid, width, c0, g);
        Value* a = param(codegen::kDynRelease);
        Value* released = fmuladd(a, y, b_.CreateFMul(b_.CreateFSub(constant(1), a), target));
        next = b_.CreateSelect(b_.CreateFCmpOGT(target, y), target, released);
        break;
      }
      case T::envelope: break;
    }
    finish(next);
    // c = 10^((M - y) / 20)
    Value* gain = from_decibels(b_.CreateFSub(param(codegen::kDynMakeup), next), width);
    return p.output_gain ? gain : b_.CreateFMul(gain, input);
  }

  // A limiter's lookahead of L samples, one lane at a time: the ring of the last L inputs
  // gives x[n - L], and the window's maximum target (this sample's and the L before it, all
  // >= 0) comes from van Herk and Gil-Werman's blocks, as a stream: positions [0, pos) of the
  // targets' ring hold this block's targets, whose running maximum is P; positions [pos, L)
  // the last block's, whose maxima from each position to the end, S, were computed when the
  // ring last wrapped. max(t, P, S[pos]) is the window: amortized O(1) a sample, where scanning
  // the ring was O(L) (a 20 ms lookahead took 775x the time of none). Returns (the window's
  // maximum target, x[n - L]).
  std::pair<Value*, Value*> emit_lookahead(const StageLayout& at, Value* target, Value* v, Value* valid, int width,
                                           Value* c0, GroupState& g) {
    int64_t length = at.ring_length;
    int position = layout_.delay_count + at.ring_index;
    const int rings = at.state_offset + codegen::kDynRings;
    auto larger = [&](Value* m, Value* x) { return b_.CreateSelect(b_.CreateFCmpOLT(m, x), x, m); };
    Value* window = target;
    Value* delayed = v;
    for (int j = 0; j < width; ++j) {
      AllocaInst* pos_slot = g.positions[position][j];
      Value* pos = b_.CreateLoad(i64_, pos_slot);
      Value* inputs = state_slot(c0, j, rings);
      Value* targets = state_slot(c0, j, rings + static_cast<int>(length));
      Value* suffix = state_slot(c0, j, rings + 2 * static_cast<int>(length));
      Value* prefix_cell = state_slot(c0, j, rings + 3 * static_cast<int>(length));
      Value* x = lane(v, width, j);
      Value* t = lane(target, width, j);
      Value* x_cell = element(inputs, t_, pos);
      Value* old = b_.CreateLoad(t_, x_cell);
      Value* prefix = b_.CreateLoad(t_, prefix_cell);
      Value* maximum = larger(larger(t, prefix), load_at(t_, suffix, pos));
      Value* t_cell = element(targets, t_, pos);
      b_.CreateStore(valid ? b_.CreateSelect(valid, x, old) : x, x_cell);
      b_.CreateStore(valid ? b_.CreateSelect(valid, t, b_.CreateLoad(t_, t_cell)) : t, t_cell);
      Value* next = b_.CreateAdd(pos, b_.getInt64(1));
      Value* wrapped = b_.CreateICmpSGE(next, b_.getInt64(length));
      if (valid) wrapped = b_.CreateAnd(wrapped, valid);
      b_.CreateStore(valid ? b_.CreateSelect(valid, larger(prefix, t), prefix) : larger(prefix, t), prefix_cell);
      // The block is whole: its suffix maxima, and an empty running maximum (0: targets are >= 0).
      when(wrapped, nullptr, nullptr, [&]() -> Value* {
        AllocaInst* acc = entry_alloca(t_);
        b_.CreateStore(ConstantFP::get(t_, 0.0), acc);
        repeat(b_.getInt64(length), [&](Value* k) { return b_.CreateICmpSGT(k, b_.getInt64(0)); },
               [&](Value* k) {
                 Value* i = b_.CreateSub(k, b_.getInt64(1));
                 Value* m = larger(b_.CreateLoad(t_, acc), load_at(t_, targets, i));
                 b_.CreateStore(m, acc);
                 b_.CreateStore(m, element(suffix, t_, i));
                 return i;
               });
        b_.CreateStore(ConstantFP::get(t_, 0.0), prefix_cell);
        return nullptr;
      });
      next = b_.CreateSelect(b_.CreateICmpSGE(next, b_.getInt64(length)), b_.getInt64(0), next);
      b_.CreateStore(valid ? b_.CreateSelect(valid, next, pos) : next, pos_slot);
      window = with_lane(window, width, j, maximum);
      delayed = with_lane(delayed, width, j, old);
    }
    return {window, delayed};
  }

  // The transposed form's partial sums at the group's start, from the ring (the state: the
  // last taps inputs, newest at position - 1): s_k = sum over m from taps - 1 down to k of
  // h[m] x[n - 1 + k - m], added in that order, which is the order emit_fir adds them in, so
  // a stream's blocks give the whole signal's bits. One vector per k, a lane per channel.
  // Computed only where `used` (the call has at least taps samples): about taps^2 / 2
  // multiply-adds a channel, which calls of a few samples would not win back.
  std::vector<AllocaInst*> fir_sums_from_ring(const ir::FirFilter& fir, const StageLayout& at, int width, Value* c0,
                                              Value* used, GroupState& g) {
    const auto taps = static_cast<int64_t>(fir.taps.size());
    std::vector<AllocaInst*> sums;
    if (taps < 2) return sums;
    Type* vt = vec(width);
    // Not zeroed where unused: the sums are then never read (a loop's one-sample calls paid
    // for the stores).
    for (int64_t k = 1; k < taps; ++k) sums.push_back(entry_alloca(vt));
    Function* f = b_.GetInsertBlock()->getParent();
    BasicBlock* compute = BasicBlock::Create(ctx_, "fir_sums", f);
    BasicBlock* after = BasicBlock::Create(ctx_, "fir_sums_done", f);
    b_.CreateCondBr(used, compute, after);
    b_.SetInsertPoint(compute);
    std::vector<Value*> vectors(static_cast<std::size_t>(taps - 1), PoisonValue::get(vt));
    AllocaInst* scratch = entry_alloca(ArrayType::get(t_, static_cast<uint64_t>(taps - 1)));
    AllocaInst* acc = entry_alloca(t_);
    for (int j = 0; j < width; ++j) {
      Value* pos = b_.CreateLoad(i64_, g.positions[layout_.delay_count + at.ring_index][j]);
      Value* ring = state_slot(c0, j, at.state_offset);
      loop(b_.getInt64(1), 1, [&](Value* k) { return b_.CreateICmpSLT(k, b_.getInt64(taps)); },
           [&](Value* k) {
             b_.CreateStore(ConstantFP::get(t_, 0.0), acc);
             loop(b_.getInt64(taps - 1), -1, [&](Value* m) { return b_.CreateICmpSGE(m, k); },
                  [&](Value* m) {
                    // x[n - 1 - d], d = m - k, is in cell pos - 1 - d, wrapped once at most.
                    Value* cell = b_.CreateSub(b_.CreateSub(pos, b_.getInt64(1)), b_.CreateSub(m, k));
                    cell = b_.CreateSelect(b_.CreateICmpSLT(cell, b_.getInt64(0)),
                                           b_.CreateAdd(cell, b_.getInt64(taps)), cell);
                    Value* h = load_at(t_, fields_[kParams], b_.CreateAdd(m, b_.getInt64(at.param_offset)));
                    b_.CreateStore(fmuladd(h, load_at(t_, ring, cell), b_.CreateLoad(t_, acc)), acc);
                  });
             b_.CreateStore(b_.CreateLoad(t_, acc), element(scratch, t_, b_.CreateSub(k, b_.getInt64(1))));
           });
      for (int64_t k = 1; k < taps; ++k)
        vectors[k - 1] = with_lane(vectors[k - 1], width, j, load_at(t_, scratch, b_.getInt64(k - 1)));
    }
    for (std::size_t k = 0; k < vectors.size(); ++k) b_.CreateStore(vectors[k], sums[k]);
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
    return sums;
  }

  // Time lanes (passes::fir_time_lanes), a channel at a time: its samples from 0 in vectors
  // of W = time_lanes_, in blocks of kTimeLanesBlock vectors while they fit, then of
  // kTimeLanesUnroll, then of one (a stream's short calls); returns the first sample left
  // (fewer than W), which the caller runs one at a time. A block runs each step over all its
  // vectors before the next step, through a stack buffer of the block's values.
  //
  // A FIR keeps a window of its input in a stack buffer: `room` cells (taps rounded up to W)
  // of history, then the block's inputs, copied in before any sum reads them. Output lane i
  // of a vector starting at n is sum over k of h[k] x[n + i - k], added from the oldest tap to
  // the newest, the transposed form's order (y = h[0] x + s_1, s_k = h[k] x + s_(k+1)), so a
  // stream's blocks, which may run their last samples through the ring, give the whole
  // signal's bits. A pass sums kTimeLanesUnroll vectors at once: each tap's multiply-add waits
  // on its own vector's last one only, which keeps both FMA units busy. The window moves on by
  // the block's samples (room / W vector copies); it comes from the ring (the state) at the
  // start, and the last taps inputs go back into it, at the positions the ring would have
  // reached, at the end.
  static constexpr int kTimeLanesUnroll = 8;
  static constexpr int kTimeLanesBlock = 4 * kTimeLanesUnroll;  // vectors a block
  static constexpr int kPrefetchBlocks = 4;
  struct Window {
    AllocaInst* cells = nullptr;
    int64_t taps = 0, room = 0;
    Value* start = nullptr;  // the ring's position at the call's start
  };

  Value* emit_time_lanes(const std::vector<Step>& all, GroupState& g, Value* c0) {
    const int w = time_lanes_;
    Type* vt = vec(w);
    Value* zero = ConstantFP::get(vt, 0.0);
    Align align = element_align(t_);
    std::vector<Window> windows(chain_.stages.size());
    for (std::size_t s = 0; s < chain_.stages.size(); ++s) {
      const auto* fir = std::get_if<ir::FirFilter>(&chain_.stages[s]);
      if (!fir) continue;
      const StageLayout& at = layout_.stages[s];
      Window& win = windows[s];
      win.taps = static_cast<int64_t>(fir->taps.size());
      win.room = (win.taps + w - 1) / w * w;
      win.cells = entry_alloca(ArrayType::get(t_, static_cast<uint64_t>(win.room + kTimeLanesBlock * w)));
      win.start = b_.CreateLoad(i64_, g.positions[layout_.delay_count + at.ring_index][0]);
      // History cell room - 1 - m holds x[-1 - m], in ring cell start - 1 - m (wrapped once).
      Value* ring = state_slot(c0, 0, at.state_offset);
      loop(b_.getInt64(0), 1, [&](Value* m) { return b_.CreateICmpSLT(m, b_.getInt64(win.taps - 1)); },
           [&](Value* m) {
             Value* cell = b_.CreateSub(b_.CreateSub(win.start, b_.getInt64(1)), m);
             cell = b_.CreateSelect(b_.CreateICmpSLT(cell, b_.getInt64(0)), b_.CreateAdd(cell, b_.getInt64(win.taps)),
                                    cell);
             b_.CreateStore(load_at(t_, ring, cell),
                            element(win.cells, t_, b_.CreateSub(b_.getInt64(win.room - 1), m)));
           });
    }
    AllocaInst* block_cells = entry_alloca(ArrayType::get(t_, static_cast<uint64_t>(kTimeLanesBlock * w)));
    auto vector_at = [&](Value* base, Value* index) { return b_.CreateAlignedLoad(vt, element(base, t_, index), align); };
    auto store_at = [&](Value* v, Value* base, Value* index) {
      b_.CreateAlignedStore(v, element(base, t_, index), align);
    };
    // `count` vectors from sample n: every step over all of them before the next step, from
    // the input (`from`, at n) through the block's cells to the output (at n).
    auto block = [&](Value* n, int64_t count) {
      const int64_t unroll = std::min<int64_t>(count, kTimeLanesUnroll);
      Value* from = element(g.in[0], t_, n);
      if (count == kTimeLanesBlock) {
        const int64_t bytes = count * w * static_cast<int64_t>(t_->getPrimitiveSizeInBits() / 8);
        for (int64_t line = 0; line < bytes; line += 64) {
          Value* ahead = b_.CreateGEP(b_.getInt8Ty(), from, b_.getInt64(kPrefetchBlocks * bytes + line));
          b_.CreateIntrinsic(Intrinsic::prefetch, {ptr_}, {ahead, b_.getInt32(0), b_.getInt32(3), b_.getInt32(1)});
        }
      }
      for (std::size_t s = 0; s < all.size(); ++s) {
        const Step& step = all[s];
        Value* to = s + 1 == all.size() ? element(g.out[0], t_, n) : static_cast<Value*>(block_cells);
        const auto* fir = std::get_if<ir::FirFilter>(&chain_.stages[step.stage]);
        if (!fir) {
          loop(b_.getInt64(0), w, [&](Value* i) { return b_.CreateICmpSLT(i, b_.getInt64(count * w)); },
               [&](Value* i) { store_at(emit_step(step, vector_at(from, i), nullptr, w, c0, g), to, i); });
          from = to;
          continue;
        }
        // The input after the window's history, a copy made before any sum reads it.
        const Window& win = windows[step.stage];
        const int first_param = layout_.stages[step.stage].param_offset;
        loop(b_.getInt64(0), w, [&](Value* i) { return b_.CreateICmpSLT(i, b_.getInt64(count * w)); },
             [&](Value* i) { store_at(vector_at(from, i), win.cells, b_.CreateAdd(i, b_.getInt64(win.room))); });
        loop(b_.getInt64(0), unroll * w, [&](Value* p) { return b_.CreateICmpSLT(p, b_.getInt64(count * w)); },
             [&](Value* p) {
               std::vector<AllocaInst*> acc(static_cast<std::size_t>(unroll));
               for (AllocaInst*& a : acc) {
                 a = entry_alloca(vt);
                 b_.CreateStore(zero, a);
               }
               Value* newest = b_.CreateAdd(p, b_.getInt64(win.room));
               loop(b_.getInt64(win.taps - 1), -1, [&](Value* k) { return b_.CreateICmpSGE(k, b_.getInt64(0)); },
                    [&](Value* k) {
                      Value* h =
                          splat(load_at(t_, fields_[kParams], b_.CreateAdd(k, b_.getInt64(first_param))), w);
                      Value* oldest = b_.CreateSub(newest, k);
                      for (int64_t i = 0; i < unroll; ++i) {
                        Value* x = vector_at(win.cells, b_.CreateAdd(oldest, b_.getInt64(i * w)));
                        b_.CreateStore(fmuladd(h, x, b_.CreateLoad(vt, acc[i])), acc[i]);
                      }
                    });
               for (int64_t i = 0; i < unroll; ++i)
                 store_at(b_.CreateLoad(vt, acc[i]), to, b_.CreateAdd(p, b_.getInt64(i * w)));
             });
        for (int64_t q = 0; q < win.room; q += w)
          store_at(vector_at(win.cells, b_.getInt64(q + count * w)), win.cells, b_.getInt64(q));
        from = to;
      }
    };
    Value* samples = fields_[kSamples];
    const int64_t whole = int64_t{kTimeLanesBlock} * w;
    Value* n = loop(b_.getInt64(0), whole,
                    [&](Value* at) { return b_.CreateICmpSLE(b_.CreateAdd(at, b_.getInt64(whole)), samples); },
                    [&](Value* at) { block(at, kTimeLanesBlock); });
    // A stream's short blocks: passes of eight vectors, then single vectors, whose one sum
    // waits on its last multiply-add every tap.
    const int64_t pass = int64_t{kTimeLanesUnroll} * w;
    n = loop(n, pass, [&](Value* at) { return b_.CreateICmpSLE(b_.CreateAdd(at, b_.getInt64(pass)), samples); },
             [&](Value* at) { block(at, kTimeLanesUnroll); });
    n = loop(n, w, [&](Value* at) { return b_.CreateICmpSLE(b_.CreateAdd(at, b_.getInt64(w)), samples); },
             [&](Value* at) { block(at, 1); });

    // The window's last taps inputs back into the ring, oldest at the position the ring has
    // reached (start + n, wrapped), which is the next to be written.
    when(b_.CreateICmpSGT(n, b_.getInt64(0)), nullptr, nullptr, [&]() -> Value* {
      for (std::size_t s = 0; s < chain_.stages.size(); ++s) {
        const Window& win = windows[s];
        if (!win.cells) continue;
        const StageLayout& at = layout_.stages[s];
        Value* taps = b_.getInt64(win.taps);
        Value* reached = b_.CreateSRem(b_.CreateAdd(win.start, b_.CreateSRem(n, taps)), taps);
        Value* ring = state_slot(c0, 0, at.state_offset);
        loop(b_.getInt64(0), 1, [&](Value* i) { return b_.CreateICmpSLT(i, taps); },
             [&](Value* i) {
               Value* cell = b_.CreateAdd(reached, i);
               cell = b_.CreateSelect(b_.CreateICmpSGE(cell, taps), b_.CreateSub(cell, taps), cell);
               b_.CreateStore(load_at(t_, win.cells, b_.CreateAdd(i, b_.getInt64(win.room - win.taps))),
                              element(ring, t_, cell));
             });
        b_.CreateStore(reached, g.positions[layout_.delay_count + at.ring_index][0]);
      }
      return nullptr;
    });
    return n;
  }

  // A FIR over a ring of the last `taps` inputs (the state, written a sample at a time), within
  // codegen::transposed_firs' budget, in the transposed form (as lfilter's):
  // y = h[0] x + s_1, s_k = h[k] x + s_(k+1), s_taps = 0, the partial sums in registers, a
  // vector a lane per channel, computed from the ring at the group's start
  // (fir_sums_from_ring). A call of fewer samples than taps sums the ring instead, from the
  // oldest tap to the newest, the transposed form's order: the same bits. Before 2026-11-30
  // every sample summed the ring in a loop that wrapped each index: 15 taps on one channel
  // 3.4 ms per 10 s, a biquad 0.3 (docs/performance.md, "Cliffs").
  Value* emit_fir(const ir::FirFilter& fir, const StageLayout& at, const std::vector<AllocaInst*>& sums, Value* used,
                  Value* v, Value* valid, int width, Value* c0, GroupState& g) {
    int64_t taps = static_cast<int64_t>(fir.taps.size());
    std::vector<Value*> positions = write_rings(at, v, valid, width, c0, g);
    Type* vt = vec(width);
    Value* zero = ConstantFP::get(vt, 0.0);
    Function* f = b_.GetInsertBlock()->getParent();
    BasicBlock* transposed = BasicBlock::Create(ctx_, "fir_transposed", f);
    BasicBlock* ring_sum = BasicBlock::Create(ctx_, "fir_ring", f);
    BasicBlock* done = BasicBlock::Create(ctx_, "fir_done", f);
    b_.CreateCondBr(used, transposed, ring_sum);
    b_.SetInsertPoint(transposed);
    auto h = [&](int64_t k) { return splat(params_[at.param_offset + k], width); };
    std::vector<Value*> old;
    for (AllocaInst* s : sums) old.push_back(b_.CreateLoad(vt, s));
    Value* y_transposed = fmuladd(h(0), v, taps > 1 ? old[0] : zero);
    for (int64_t k = 1; k < taps; ++k) {
      Value* next = fmuladd(h(k), v, k + 1 < taps ? old[k] : zero);
      b_.CreateStore(valid ? b_.CreateSelect(valid, next, old[k - 1]) : next, sums[k - 1]);
    }
    BasicBlock* transposed_end = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(ring_sum);
    Value* y_ring = sum_rings(at, taps, positions, true, width, c0);
    BasicBlock* ring_end = b_.GetInsertBlock();
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    PHINode* y = b_.CreatePHI(vt, 2);
    y->addIncoming(y_transposed, transposed_end);
    y->addIncoming(y_ring, ring_end);
    advance_rings(at, taps, positions, valid, width, g);
    return y;
  }

  // A FIR past the transposed form's budget (codegen::transposed_firs): each sample sums the
  // ring in a loop, one lane at a time, newest tap first (or `oldest_first`).
  Value* emit_fir_loop(const ir::FirFilter& fir, const StageLayout& at, Value* v, Value* valid, int width, Value* c0,
                       GroupState& g, bool oldest_first) {
    int64_t taps = static_cast<int64_t>(fir.taps.size());
    std::vector<Value*> positions = write_rings(at, v, valid, width, c0, g);
    Value* y = sum_rings(at, taps, positions, oldest_first, width, c0);
    advance_rings(at, taps, positions, valid, width, g);
    return y;
  }

  // Each lane's sample into its FIR ring's current cell (the cell's own value where a step
  // is not `valid`); returns the lanes' positions.
  std::vector<Value*> write_rings(const StageLayout& at, Value* v, Value* valid, int width, Value* c0, GroupState& g) {
    std::vector<Value*> positions;
    for (int j = 0; j < width; ++j) {
      Value* pos = b_.CreateLoad(i64_, g.positions[layout_.delay_count + at.ring_index][j]);
      Value* cell = element(state_slot(c0, j, at.state_offset), t_, pos);
      Value* x = lane(v, width, j);
      b_.CreateStore(valid ? b_.CreateSelect(valid, x, b_.CreateLoad(t_, cell)) : x, cell);
      positions.push_back(pos);
    }
    return positions;
  }

  // Each lane's ring position one cell on, wrapping at `taps`, where the step is `valid`.
  void advance_rings(const StageLayout& at, int64_t taps, const std::vector<Value*>& positions, Value* valid,
                     int width, GroupState& g) {
    for (int j = 0; j < width; ++j) {
      Value* pos = positions[j];
      Value* next = b_.CreateAdd(pos, b_.getInt64(1));
      next = b_.CreateSelect(b_.CreateICmpSGE(next, b_.getInt64(taps)), b_.getInt64(0), next);
      b_.CreateStore(valid ? b_.CreateSelect(valid, next, pos) : next,
                     g.positions[layout_.delay_count + at.ring_index][j]);
    }
  }

  // Per lane, sum over k of h[k] x ring[(pos - k) mod taps], the newest sample at pos: from
  // k = taps - 1 down (`oldest_first`, the transposed form's order) or from k = 0 up.
  Value* sum_rings(const StageLayout& at, int64_t taps, const std::vector<Value*>& positions, bool oldest_first,
                   int width, Value* c0) {
    Value* y = width == 1 ? nullptr : PoisonValue::get(vec(width));
    AllocaInst* acc = entry_alloca(t_);
    for (int j = 0; j < width; ++j) {
      Value* ring = state_slot(c0, j, at.state_offset);
      b_.CreateStore(ConstantFP::get(t_, 0.0), acc);
      auto add_tap = [&](Value* k) {
        Value* back = b_.CreateSub(positions[j], k);
        Value* index = b_.CreateSelect(b_.CreateICmpSLT(back, b_.getInt64(0)), b_.CreateAdd(back, b_.getInt64(taps)),
                                       back);
        Value* h = load_at(t_, fields_[kParams], b_.CreateAdd(k, b_.getInt64(at.param_offset)));
        b_.CreateStore(fmuladd(h, load_at(t_, ring, index), b_.CreateLoad(t_, acc)), acc);
      };
      if (oldest_first)
        loop(b_.getInt64(taps - 1), -1, [&](Value* k) { return b_.CreateICmpSGE(k, b_.getInt64(0)); }, add_tap);
      else
        loop(b_.getInt64(0), 1, [&](Value* k) { return b_.CreateICmpSLT(k, b_.getInt64(taps)); }, add_tap);
      Value* yj = b_.CreateLoad(t_, acc);
      y = width == 1 ? yj : b_.CreateInsertElement(y, yj, static_cast<uint64_t>(j));
    }
    return y;
  }

  Module& m_;
  LLVMContext& ctx_;
  IRBuilder<> b_;
  const ir::Chain& chain_;
  ChainLayout layout_;
  std::vector<bool> transposed_firs_;  // by stage (codegen::transposed_firs)
  Type* t_;         // coefficients, state, arithmetic
  Type* sample_t_;  // the signal in memory
  IntegerType* i64_;
  PointerType* ptr_;
  std::string name_;
  int channels_;
  StructType* args_ty_ = nullptr;
  Value* fields_[9] = {};
  std::vector<Value*> params_;
  std::vector<Value*> delay_lengths_;
  bool wavefront_ = false;
  Value* loop_input_ = nullptr;  // a fused loop's input and line sample, from loop_read to loop_write
  Value* loop_read_ = nullptr;
  // Inside emit_tiles' loop over a tile: the sample's index in the tile, and by delay index
  // the fused loops' lines as lane vectors, read before the tile and written after it.
  Value* tile_sample_ = nullptr;
  std::vector<AllocaInst*> tile_lines_in_, tile_lines_out_;
  int tile_row_ = -1;  // in emit_tile_rows: the channel (lane) whose W samples are being emitted
  bool partial_ = false;  // partial_group_vectorized
  int time_lanes_ = 0;    // fir_time_lanes: the samples of a vector (a channel at a time), else 0
  int live_lanes_ = 0;    // in a partial group: the lanes that hold channels (0: all)
};

}  // namespace

void emit_chain_kernel(Module& module, const ir::Graph& graph, ir::NodeId id) {
  const ir::Node& node = graph.node(id);
  const ir::Chain& chain = std::get<ir::Chain>(node.op);
  // channel_lanes: vectors of the host's width across channels, sections in order (eight
  // independent lanes already keep the FMA units busy, and the wavefront's pipeline registers
  // would spill: measured 8.7 ms against 13.2 ms on W1). chunked_scan: the same lanes kernel,
  // which the runtime calls with time chunks as lanes (runtime/chunked_scan.h). A chain with a
  // fused loop, or with FIRs in the transposed form, and no recursion (strategy none): lanes
  // too (codegen::lanes_across_channels). section_wavefront: one channel at a time with the
  // wavefront. FIRs and memoryless stages only: a channel at a time, its samples in lanes
  // (passes::fir_time_lanes).
  using S = ir::IirStrategy;
  const int channel_count = node.type.channels;
  bool vector = lanes_across_channels(chain, node.type.dtype, channel_count);
  int host_lanes = passes::host_target().lanes(compute_dtype(chain, node.type.dtype));
  int lanes = vector ? host_lanes : 1;
  int time_lanes = passes::fir_time_lanes(chain, node.type.dtype, channel_count) && host_lanes > 1 ? host_lanes : 0;
  bool wavefront = chain.strategy == S::section_wavefront;
  int channels = chain.strategy == S::chunked_scan ? 0 : node.type.channels;
  ChainEmitter(module, chain, node.type.dtype, channels, kernel_symbol(id))
      .emit(lanes, wavefront, partial_group_vectorized(chain, node.type.dtype, channel_count), time_lanes);
}

}  // namespace fxc::codegen
