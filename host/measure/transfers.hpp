// --transfers: a configuration timed end to end, per repetition: the host's packing or conversion
// of its input (beside a plain memcpy of the same bytes and the lines it must read), the upload,
// its launches and the download, each by profiling events or the host's clock.
#pragma once

#include "bound_input.hpp"
#include "cl_env.hpp"
#include "core.hpp"
#include "results.hpp"

namespace kperf {

// `reps` timed repetitions (after two untimed ones) of the chain of one `p` on `w`, into
// row.transfer_samples.
void time_transfers(ClEnv& env, Core& core, const BoundInput& w, const Prepared& p, int reps,
                    ResultRow& row);

}  // namespace kperf
