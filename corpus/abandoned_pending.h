// SPDX-License-Identifier: Apache-2.0
// What an interrupted corpus run leaves behind: the pending files of its outputs, and the
// temporary files those are written through, removed once the outputs are complete.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fxc::corpus {

/// Removes, beside each of `outputs` that exists, the files a killed run left for it: its
/// pending file `.fxc-pending-PID-N-NAME` (PendingOutputs) and that file's temporary
/// `..fxc-pending-PID-N-NAME.tmp-XXXXXX` (write_file_atomically), and only those written
/// before the output itself was (the output's write came after them, so they were abandoned;
/// a concurrent run's file in flight is newer). Each directory is listed once. Returns how
/// many were removed; a file that cannot be removed is left.
std::size_t remove_abandoned_pending(const std::vector<std::string>& outputs);

}  // namespace fxc::corpus
