// SPDX-License-Identifier: Apache-2.0
#include "corpus/output_names.h"

#include <cctype>
#include <filesystem>
#include <unordered_map>

#include "support/file_io.h"

namespace fxc::corpus {
namespace {

namespace fs = std::filesystem;

// A graph output's name in file names; an unnamed one is "out" and its index.
std::string output_label(const std::vector<std::string>& names, std::size_t k) {
  return names[k].empty() ? "out" + std::to_string(k + 1) : names[k];
}

std::string normal(const std::string& path) { return fs::path(path).lexically_normal().generic_string(); }

Expected<std::string, std::string> expand(const std::string& pattern, const InputFile& input, const std::string& output) {
  fs::path file = fs::path(input.path).filename();
  std::string ext = file.extension().string();
  if (!ext.empty()) ext.erase(0, 1);
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '}' ) {
      if (i + 1 < pattern.size() && pattern[i + 1] == '}') ++i;
      else return Unexpected{"the output pattern '" + pattern + "' has a '}' without '{' (write '}}' for a brace)"};
      out += '}';
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < pattern.size() && pattern[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    std::size_t close = pattern.find('}', i);
    if (close == std::string::npos)
      return Unexpected{"the output pattern '" + pattern + "' has a '{' that is not closed"};
    std::string field = pattern.substr(i + 1, close - i - 1);
    i = close;
    if (field == "stem") out += file.stem().string();
    else if (field == "name") out += file.string();
    else if (field == "ext") {
      // Without this, "take" would make "take." and a later, vaguer "unknown extension '.'".
      if (ext.empty())
        return Unexpected{"the input '" + input.path + "' has no extension to give its output ({ext}): name the "
                          "outputs with a pattern that has one, such as -o 'out/{dir}/{stem}.wav'"};
      out += ext;
    }
    else if (field == "output") out += output;
    else if (field == "dir") {
      out += input.relative_dir;
      // "{dir}/x" at the root is "x", not "/x".
      if (input.relative_dir.empty() && i + 1 < pattern.size() && pattern[i + 1] == '/') ++i;
    } else {
      return Unexpected{"unknown field '{" + field + "}' in the output pattern '" + pattern +
                        "' (fields: {stem} {name} {ext} {dir} {output}; '{{' and '}}' are literal "
                        "braces)"};
    }
  }
  if (out.empty()) return Unexpected{"the output pattern '" + pattern + "' gives an empty name"};
  return normal(out);
}

// What tells two inputs' outputs apart: their names first, then their directories and
// extensions.
std::string clash_advice(const std::string& pattern) {
  bool names = pattern.empty() || pattern.find("{stem}") != std::string::npos ||
               pattern.find("{name}") != std::string::npos;
  return names ? "add {dir} or {ext} to the pattern, or rename one" : "add {stem} or {name} to the pattern";
}

}  // namespace

bool has_pattern_field(const std::string& text) {
  // Any {word}, so that a misspelt field is reported as one rather than taken as a file name;
  // `{{` is a literal brace, not the start of one.
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') continue;
    if (i + 1 < text.size() && text[i + 1] == '{') {
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
    if (end > i + 1 && end < text.size() && text[end] == '}') return true;
  }
  return false;
}

Expected<std::vector<std::string>, std::string> output_paths(const OutputNaming& naming, const InputFile& input,
                                                             const std::vector<std::string>& output_names) {
  if (naming.out_dir.empty() == naming.pattern.empty())
    return Unexpected{std::string("give either an output directory or an output name pattern")};
  if (output_names.empty()) return Unexpected{std::string("the graph has no outputs")};
  bool several = output_names.size() > 1;
  if (!naming.pattern.empty() && several && naming.pattern.find("{output}") == std::string::npos)
    return Unexpected{"the graph has " + std::to_string(output_names.size()) + " outputs, so the output pattern '" +
                      naming.pattern + "' needs {output} to name them apart"};
  std::string pattern = naming.pattern;
  if (pattern.empty()) {
    // The directory is taken literally: its braces are doubled before it joins the fields.
    std::string dir;
    for (char c : naming.out_dir) {
      dir += c;
      if (c == '{' || c == '}') dir += c;
    }
    pattern = dir + "/{dir}/{stem}" + (several ? "_{output}" : "") + ".{ext}";
  }
  std::vector<std::string> paths;
  for (std::size_t k = 0; k < output_names.size(); ++k) {
    auto path = expand(pattern, input, output_label(output_names, k));
    if (!path) return Unexpected{path.error()};
    paths.push_back(std::move(path).value());
  }
  return paths;
}

Expected<std::vector<std::vector<std::string>>, std::string> all_output_paths(
    const OutputNaming& naming, const std::vector<InputFile>& inputs, const std::vector<std::string>& output_names) {
  std::vector<std::vector<std::string>> all;
  all.reserve(inputs.size());
  std::unordered_map<std::string, std::size_t> owner;  // the output's file_identity -> input index
  std::unordered_map<std::string, std::size_t> input_at;
  // Paths compare as the files they reach (an --out-dir that links to the input directory, an
  // output name that links to an input).
  for (std::size_t i = 0; i < inputs.size(); ++i) input_at.emplace(file_identity(inputs[i].path), i);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto paths = output_paths(naming, inputs[i], output_names);
    if (!paths) return Unexpected{paths.error()};
    for (const std::string& path : *paths) {
      std::string key = file_identity(path);
      if (auto it = input_at.find(key); it != input_at.end())
        return Unexpected{"the output '" + path + "' of '" + inputs[i].path + "' would replace the input '" +
                          inputs[it->second].path + "' (choose another --out-dir or pattern)"};
      auto [it, fresh] = owner.emplace(key, i);
      if (!fresh) {
        if (it->second == i)
          return Unexpected{"two outputs of '" + inputs[i].path + "' map to one name, '" + path + "'"};
        return Unexpected{"'" + inputs[it->second].path + "' and '" + inputs[i].path + "' map to the same output '" +
                          path + "' (" + clash_advice(naming.pattern) + ")"};
      }
    }
    all.push_back(std::move(paths).value());
  }
  return all;
}

}  // namespace fxc::corpus
