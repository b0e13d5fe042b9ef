// The exit statuses every layer may return or recognise (docs/cli.md lists them all).
#pragma once

namespace kperf {

constexpr int kExitUsage = 2;          // a bad command line or input
constexpr int kExitDevice = 3;         // no usable OpenCL device
constexpr int kExitInterrupted = 130;  // SIGINT or SIGTERM: the rows so far are written

}  // namespace kperf
