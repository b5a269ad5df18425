// SPDX-License-Identifier: Apache-2.0
// Optimizing, compiling and loading chain kernels with LLVM: the only file that talks to
// ORC and the code generator.
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <mutex>

#include "codegen/chain_layout.h"
#include "codegen/cpu/cpu_compiler.h"
#include "codegen/cpu/emit_chain.h"

namespace fxc::codegen {
namespace {

using llvm::Error;

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

std::string message_of(Error error) { return llvm::toString(std::move(error)); }

Expected<llvm::orc::JITTargetMachineBuilder, std::string> host_builder() {
  initialize_llvm();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) return Unexpected{"cannot describe the host CPU to LLVM: " + message_of(builder.takeError())};
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  return std::move(*builder);
}

std::vector<ir::NodeId> kernel_ids(const ir::Graph& graph) { return kernel_node_ids(graph); }

std::unique_ptr<llvm::Module> build_module(llvm::LLVMContext& context, const ir::Graph& graph,
                                           llvm::TargetMachine& machine) {
  auto module = std::make_unique<llvm::Module>("fxc." + graph.name, context);
  module->setDataLayout(machine.createDataLayout());
  module->setTargetTriple(machine.getTargetTriple().str());
  for (ir::NodeId id : kernel_ids(graph)) {
    if (ir::holds<ir::Sum>(graph.node(id))) emit_sum_kernel(*module, graph, id);
    else emit_chain_kernel(*module, graph, id);
  }
  return module;
}

void optimize(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, modules);
}

Expected<std::string, std::string> object_file(llvm::Module& module, llvm::TargetMachine& machine) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream stream(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr, llvm::CodeGenFileType::ObjectFile))
    return Unexpected{std::string("LLVM cannot emit object files for this host")};
  passes.run(module);
  return std::string(buffer.begin(), buffer.end());
}

class LoadedKernels : public CpuKernels {
 public:
  FxcChainKernel kernel(ir::NodeId id) const override {
    auto it = kernels_.find(id);
    return it == kernels_.end() ? nullptr : it->second;
  }
  const std::string& object_code() const override { return object_; }

  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::map<ir::NodeId, FxcChainKernel> kernels_;
  std::string object_;
};

}  // namespace

Expected<std::string, std::string> emit_cpu_llvm_ir(const ir::Graph& scheduled, bool optimized) {
  auto builder = host_builder();
  if (!builder) return Unexpected{builder.error()};
  auto machine = builder->createTargetMachine();
  if (!machine) return Unexpected{message_of(machine.takeError())};
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = build_module(context, scheduled, **machine);
  if (optimized) optimize(*module, **machine);
  std::string text;
  llvm::raw_string_ostream out(text);
  module->print(out, nullptr);
  return out.str();
}

Expected<std::shared_ptr<const CpuKernels>, std::string> compile_cpu_kernels(
    const ir::Graph& scheduled) {
  auto builder = host_builder();
  if (!builder) return Unexpected{builder.error()};
  auto machine = builder->createTargetMachine();
  if (!machine) return Unexpected{message_of(machine.takeError())};
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = build_module(context, scheduled, **machine);
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(*module, &problem_stream))
    return Unexpected{"internal error (a bug in fxc): invalid LLVM IR generated: " + problem_stream.str()};
  optimize(*module, **machine);
  auto object = object_file(*module, **machine);
  if (!object) return Unexpected{object.error()};
  return load_cpu_kernels(*object, kernel_ids(scheduled));
}

Expected<std::shared_ptr<const CpuKernels>, std::string> load_cpu_kernels(
    const std::string& object_code, const std::vector<ir::NodeId>& ids) {
  auto builder = host_builder();
  if (!builder) return Unexpected{builder.error()};
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*builder)).create();
  if (!jit) return Unexpected{"cannot start the LLVM JIT: " + message_of(jit.takeError())};
  // Kernels call libm (tanh, tanhf): resolve them in this process.
  auto libm = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!libm) return Unexpected{message_of(libm.takeError())};
  (*jit)->getMainJITDylib().addGenerator(std::move(*libm));
  if (Error e = (*jit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object_code)))
    return Unexpected{"cannot load compiled kernels: " + message_of(std::move(e))};

  auto kernels = std::make_shared<LoadedKernels>();
  for (ir::NodeId id : ids) {
    auto symbol = (*jit)->lookup(kernel_symbol(id));
    if (!symbol) return Unexpected{"compiled kernels lack " + kernel_symbol(id) + ": " + message_of(symbol.takeError())};
    kernels->kernels_[id] = symbol->toPtr<FxcChainKernel>();
  }
  kernels->jit = std::move(*jit);
  kernels->object_ = object_code;
  return std::shared_ptr<const CpuKernels>(std::move(kernels));
}

std::string cpu_target_id() {
  static const std::string id = [] {  // detecting the host is slow; it does not change
    auto builder = host_builder();
    return builder ? builder->getCPU() + " " + builder->getFeatures().getString() : "unknown";
  }();
  return id;
}

std::string llvm_version_string() { return "LLVM " LLVM_VERSION_STRING; }

}  // namespace fxc::codegen
