// SPDX-License-Identifier: Apache-2.0
// The LLVM IR of a sum node's kernel.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include "codegen/chain_layout.h"
#include "codegen/cpu/emit_chain.h"

namespace fxc::codegen {

// Algorithm: for each channel c and sample n, acc = 0, then acc = fmuladd(w_i, x_i[c][n], acc)
// for each operand in order (the reference adds weighted operands in that order too), and
// out[c][n] = acc. The sample loop is plain, so LLVM's loop vectorizer turns it into vector
// code; all operands are read at n before out[n] is written, so out may be an operand.
void emit_sum_kernel(llvm::Module& module, const ir::Graph& graph, ir::NodeId id) {
  using namespace llvm;
  const ir::Node& node = graph.node(id);
  const auto& sum = std::get<ir::Sum>(node.op);
  LLVMContext& ctx = module.getContext();
  IRBuilder<> b(ctx);
  Type* t = node.type.dtype == DType::f32 ? Type::getFloatTy(ctx) : Type::getDoubleTy(ctx);
  IntegerType* i64 = Type::getInt64Ty(ctx);
  PointerType* ptr = PointerType::getUnqual(ctx);
  StructType* args_ty = StructType::get(ctx, {ptr, ptr, i64, i64, ptr, ptr, ptr, ptr, ptr});
  Function* f = Function::Create(FunctionType::get(Type::getVoidTy(ctx), {ptr}, false),
                                 Function::ExternalLinkage, kernel_symbol(id), module);
  f->addFnAttr(Attribute::NoUnwind);
  BasicBlock* entry = BasicBlock::Create(ctx, "entry", f);
  b.SetInsertPoint(entry);
  Value* args = f->getArg(0);
  auto field = [&](int i, Type* type) { return b.CreateLoad(type, b.CreateStructGEP(args_ty, args, i)); };
  Value* in = field(0, ptr);
  Value* out = field(1, ptr);
  Value* channels = field(2, i64);
  Value* samples = field(3, i64);
  Value* params = field(4, ptr);
  std::size_t operands = sum.weights.size();
  std::vector<Value*> weights;
  for (std::size_t i = 0; i < operands; ++i)
    weights.push_back(b.CreateLoad(t, b.CreateInBoundsGEP(t, params, b.getInt64(i))));

  // for (c = 0; c < channels; ++c) for (n = 0; n < samples; ++n) ...
  auto counted = [&](Value* end, const std::function<void(Value*)>& body) {
    BasicBlock* before = b.GetInsertBlock();
    BasicBlock* header = BasicBlock::Create(ctx, "loop", f);
    BasicBlock* inside = BasicBlock::Create(ctx, "body", f);
    BasicBlock* after = BasicBlock::Create(ctx, "exit", f);
    b.CreateBr(header);
    b.SetInsertPoint(header);
    PHINode* i = b.CreatePHI(i64, 2);
    i->addIncoming(b.getInt64(0), before);
    b.CreateCondBr(b.CreateICmpSLT(i, end), inside, after);
    b.SetInsertPoint(inside);
    body(i);
    i->addIncoming(b.CreateAdd(i, b.getInt64(1)), b.GetInsertBlock());
    b.CreateBr(header);
    b.SetInsertPoint(after);
  };
  counted(channels, [&](Value* c) {
    std::vector<Value*> sources;
    for (std::size_t i = 0; i < operands; ++i) {
      Value* slot = b.CreateAdd(b.CreateMul(b.getInt64(i), channels), c);
      sources.push_back(b.CreateLoad(ptr, b.CreateInBoundsGEP(ptr, in, slot)));
    }
    Value* target = b.CreateLoad(ptr, b.CreateInBoundsGEP(ptr, out, c));
    counted(samples, [&](Value* n) {
      Value* acc = ConstantFP::get(t, 0.0);
      for (std::size_t i = 0; i < operands; ++i) {
        Value* x = b.CreateLoad(t, b.CreateInBoundsGEP(t, sources[i], n));
        acc = b.CreateIntrinsic(Intrinsic::fmuladd, {t}, {weights[i], x, acc});
      }
      b.CreateStore(acc, b.CreateInBoundsGEP(t, target, n));
    });
  });
  b.CreateRetVoid();
}

}  // namespace fxc::codegen
