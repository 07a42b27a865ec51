package dev.fairway.lb;

import java.util.List;

final class StrategyNames {
  static final List<String> ALL = List.of("round-robin", "weighted-round-robin", "random", "least-connections",
      "power-of-two-choices", "key-affinity", "consistent-hash", "least-response-time", "concurrency-limited");

  private StrategyNames() {}
}
