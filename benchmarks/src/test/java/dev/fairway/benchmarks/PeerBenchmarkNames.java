package dev.fairway.benchmarks;

import java.util.List;

/** The values of {@link PeerBenchmark#balancer}, for tests. */
final class PeerBenchmarkNames {
  static final List<String> ALL = List.of(
      "fairway-round-robin",
      "fairway-weighted-round-robin",
      "fairway-random",
      "fairway-least-connections",
      "fairway-consistent-hash",
      "fairway-least-response-time",
      "ribbon-round-robin",
      "ribbon-weighted-response-time",
      "spring-round-robin",
      "spring-random",
      "dubbo-round-robin",
      "dubbo-least-active",
      "dubbo-consistent-hash",
      "armeria-round-robin",
      "armeria-weighted-round-robin");

  private PeerBenchmarkNames() {}
}
