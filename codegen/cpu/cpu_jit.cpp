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
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <string_view>
#include <variant>

#include "codegen/chain_layout.h"
#include "codegen/cpu/cpu_compiler.h"
#include "codegen/vector_math.h"
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
                                           llvm::TargetMachine& machine, const std::vector<ir::NodeId>& ids) {
  auto module = std::make_unique<llvm::Module>("fxc." + graph.name, context);
  module->setDataLayout(machine.createDataLayout());
  module->setTargetTriple(machine.getTargetTriple().str());
  for (ir::NodeId id : ids) {
    if (ir::holds<ir::Sum>(graph.node(id))) emit_sum_kernel(*module, graph, id);
    else emit_chain_kernel(*module, graph, id);
  }
  return module;
}

// LLVM's O1 pipeline: fxc's kernels arrive vectorized, with their loops as they should run, so
// O3's vectorizers and heavier loop passes add compile time and no speed. Measured, same
// session, one thread (fxc bench, kernel time / cold compile, O3 against O1): W1 8 ch 18.5 /
// 67-77 ms against 18.5-18.8 / 55-56 ms; W2 3.76 / 28 against 3.77 / 24.6; W4 1.65 / 35 against
// 1.65 / 32; W5 10.6 / 35.5 against 10.5 / 32; Freeverb 26.8 / 656 against 25.9 / 621; the
// echo 2.65 / 33 against 2.5 / 30; the vocal dynamics 26.5 / 49 against 26.5 / 44; the
// compressor bank 41.5 / 22 against 41.4 / 21: the kernels equal within noise everywhere.
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
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O1).run(module, modules);
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

// One module's kernels generated, optimized and compiled to an object file. Everything LLVM
// keeps here (context, target machine, pass managers) is this call's own, so modules compile
// on several threads at once.
Expected<std::string, std::string> compile_module(const ir::Graph& scheduled, const std::vector<ir::NodeId>& ids) {
  auto builder = host_builder();
  if (!builder) return Unexpected{builder.error()};
  auto machine = builder->createTargetMachine();
  if (!machine) return Unexpected{message_of(machine.takeError())};
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module = build_module(context, scheduled, **machine, ids);
  std::string problems;
  llvm::raw_string_ostream problem_stream(problems);
  if (llvm::verifyModule(*module, &problem_stream))
    return Unexpected{"internal error (a bug in fxc): invalid LLVM IR generated: " + problem_stream.str()};
  optimize(*module, **machine);
  return object_file(*module, **machine);
}

// The kernels in at most `modules` groups of about equal LLVM work: a kernel's work grows
// with its stages and the vectors its channels fill, so each goes, largest first, to the
// group with the least so far.
std::vector<std::vector<ir::NodeId>> split_kernels(const ir::Graph& graph, std::size_t modules) {
  std::vector<ir::NodeId> ids = kernel_ids(graph);
  std::size_t count = std::clamp<std::size_t>(modules, 1, std::max<std::size_t>(ids.size(), 1));
  std::vector<std::pair<double, ir::NodeId>> weighted;
  for (ir::NodeId id : ids) {
    const ir::Node& node = graph.node(id);
    double stages = 1;
    if (const auto* chain = std::get_if<ir::Chain>(&node.op)) stages += static_cast<double>(chain->stages.size());
    weighted.emplace_back(stages * (1 + node.type.channels / 8), id);
  }
  std::stable_sort(weighted.begin(), weighted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::vector<ir::NodeId>> groups(count);
  std::vector<double> load(count, 0);
  for (const auto& [weight, id] : weighted) {
    std::size_t g = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    groups[g].push_back(id);
    load[g] += weight;
  }
  std::erase_if(groups, [](const auto& g) { return g.empty(); });
  if (groups.empty()) groups.emplace_back();  // a graph without kernels: one empty module
  return groups;
}

// Several object files as one string for the disk cache: a magic line, then for each a
// 16-digit hexadecimal length and its bytes. A single object stays as it is, so entries
// written before bundles existed still load.
constexpr std::string_view kBundleMagic = "fxc-object-bundle 1\n";

std::string bundle_objects(const std::vector<std::string>& objects) {
  std::string out(kBundleMagic);
  for (const std::string& o : objects) {
    char length[17];
    std::snprintf(length, sizeof length, "%016zx", o.size());
    out += length;
    out += o;
  }
  return out;
}

Expected<std::vector<std::string_view>, std::string> unbundle_objects(std::string_view code) {
  if (code.substr(0, kBundleMagic.size()) != kBundleMagic) return std::vector<std::string_view>{code};
  std::vector<std::string_view> objects;
  std::size_t at = kBundleMagic.size();
  while (at < code.size()) {
    if (code.size() - at < 16) return Unexpected{std::string("a truncated object bundle")};
    std::size_t length = 0;
    for (char c : code.substr(at, 16)) {
      int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (digit < 0) return Unexpected{std::string("a damaged object bundle")};
      length = length * 16 + static_cast<std::size_t>(digit);
    }
    at += 16;
    if (length > code.size() - at) return Unexpected{std::string("a truncated object bundle")};
    objects.push_back(code.substr(at, length));
    at += length;
  }
  return objects;
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
  std::unique_ptr<llvm::Module> module = build_module(context, scheduled, **machine, kernel_ids(scheduled));
  if (optimized) optimize(*module, **machine);
  std::string text;
  llvm::raw_string_ostream out(text);
  module->print(out, nullptr);
  return out.str();
}

Expected<std::shared_ptr<const CpuKernels>, std::string> compile_cpu_kernels(
    const ir::Graph& scheduled, std::size_t modules, const ParallelFor& parallel) {
  std::vector<std::vector<ir::NodeId>> groups = split_kernels(scheduled, parallel ? modules : 1);
  std::vector<Expected<std::string, std::string>> objects(groups.size(), Unexpected{std::string("not compiled")});
  auto compile_group = [&](std::size_t g) { objects[g] = compile_module(scheduled, groups[g]); };
  if (groups.size() > 1) parallel(groups.size(), compile_group);
  else if (!groups.empty()) compile_group(0);
  std::vector<std::string> parts;
  for (auto& object : objects) {
    if (!object) return Unexpected{object.error()};
    parts.push_back(std::move(*object));
  }
  return load_cpu_kernels(parts.size() == 1 ? parts[0] : bundle_objects(parts), kernel_ids(scheduled));
}

Expected<std::shared_ptr<const CpuKernels>, std::string> load_cpu_kernels(
    const std::string& object_code, const std::vector<ir::NodeId>& ids) {
  auto builder = host_builder();
  if (!builder) return Unexpected{builder.error()};
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*builder)).create();
  if (!jit) return Unexpected{"cannot start the LLVM JIT: " + message_of(jit.takeError())};
  // Kernels call libm (tanh, tanhf) and libmvec (vector_math.h, which loads it): resolve them
  // in this process.
  (void)vector_math_id();
  auto libm = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!libm) return Unexpected{message_of(libm.takeError())};
  (*jit)->getMainJITDylib().addGenerator(std::move(*libm));
  auto objects = unbundle_objects(object_code);
  if (!objects) return Unexpected{"cannot load compiled kernels: " + objects.error()};
  for (std::string_view object : *objects)
    if (Error e = (*jit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()))))
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
