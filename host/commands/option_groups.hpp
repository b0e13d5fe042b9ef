// The options several commands take, each declared once: timing, launch shapes, the tuners'
// search, energy and the document's path. A command adds the groups it takes beside its own.
#pragma once

#include <cxxopts.hpp>
#include <string>

namespace kperf {

// --warmup and --reps: untimed and timed `what` ("launches per configuration", "chain runs per
// timed chain"), with their defaults.
void add_timing_options(cxxopts::Options& options, const std::string& what, const char* warmup,
                        const char* reps);
// --wg, --vec and --py: `wg_help` says what --wg takes and its default; `outputs_default` the
// default of --vec and --py ("1"), or nullptr where the device decides, as `vec_note` and
// `py_note` then say.
void add_shape_options(cxxopts::Options& options, const std::string& wg_help,
                       const char* outputs_default, const std::string& vec_note = "",
                       const std::string& py_note = "");
// The tuners' --budget, --train, --test, --percentile, --tie-tolerance and --cache; `metric` says
// whose primary metric the budget is a fraction of.
void add_search_options(cxxopts::Options& options, const std::string& metric);
// --energy, --energy-window and --energy-reps, measured `where` ("" or " in the timed stages").
void add_energy_options(cxxopts::Options& options, const std::string& where);
// --out: the document's path, PREFIX-<device>-<time>.json by default.
void add_out_option(cxxopts::Options& options, const std::string& prefix);

}  // namespace kperf
