// SPDX-License-Identifier: Apache-2.0
// Where a corpus run writes each input's outputs: under an output directory that mirrors the
// inputs' directories, or by a name pattern with fields ({stem}, {dir}, ...).
#pragma once

#include <string>
#include <vector>

#include "corpus/file_list.h"
#include "support/expected.h"

namespace fxc::corpus {

/// How outputs are named; exactly one of the two is set.
struct OutputNaming {
  /// Outputs go to out_dir/{dir}/{stem}.{ext} for a graph with one output, and
  /// out_dir/{dir}/{stem}_{output}.{ext} for several.
  std::string out_dir;
  /// A path with fields: {stem} (the input's name without its extension), {name} (with it),
  /// {ext} (its extension without the dot), {dir} (its directory relative to its root, "" at
  /// the root: a '/' right after an empty {dir} is dropped), {output} (the graph output's name),
  /// and {{ / }} for literal braces.
  std::string pattern;
};

/// True when `text` holds a `{word}` (so `-o` names a pattern; an unknown field is then an
/// error of output_paths rather than part of a file name).
bool has_pattern_field(const std::string& text);

/// The output paths for `input`, one per graph output in `output_names`' order. Errors: a
/// pattern with an unknown field or an unclosed brace, a graph with several outputs and a
/// pattern without {output} (its outputs would share one name), neither or both of
/// out_dir and pattern set.
Expected<std::vector<std::string>, std::string> output_paths(const OutputNaming& naming, const InputFile& input,
                                                             const std::vector<std::string>& output_names);

/// The outputs of every input, or the first clash: two outputs with one path (compared as
/// absolute, normalised paths), or an output that is one of the inputs.
Expected<std::vector<std::vector<std::string>>, std::string> all_output_paths(
    const OutputNaming& naming, const std::vector<InputFile>& inputs, const std::vector<std::string>& output_names);

}  // namespace fxc::corpus
