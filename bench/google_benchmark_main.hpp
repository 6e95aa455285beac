// The main() of a Google Benchmark program of tcemu: our --help (Google Benchmark would print its
// own), Google Benchmark's --benchmark_* flags, anything else refused by run_program, and a
// reporter that prints the program's table of ratios after the runs.
#pragma once

#include <algorithm>
#include <string_view>

#include <benchmark/benchmark.h>

#include <tcemu/session/arguments.hpp>

namespace tcemu::bench {

// Runs the registered benchmarks through a Reporter (a benchmark::ConsoleReporter with a
// print_table() called after the runs); returns the exit status.
template <class Reporter>
int google_benchmark_main(const char* name, const char* usage, int argc, char** argv) {
  const bool help = std::any_of(argv + 1, argv + argc, [](std::string_view word) {
    return word == "--help" || word == "-h";
  });
  // Google Benchmark takes its --benchmark_* flags out of argv; run_program refuses the rest.
  if (!help) benchmark::Initialize(&argc, argv);
  return session::run_program(
      {name, usage, {}, {}}, argc, argv, [](const session::Arguments& args) {
        if (!args.positional().empty()) {
          throw session::UsageError("unexpected word '" + args.positional()[0] + "'");
        }
        Reporter reporter;
        benchmark::RunSpecifiedBenchmarks(&reporter);
        reporter.print_table();
        benchmark::Shutdown();
        return 0;
      });
}

}  // namespace tcemu::bench
