package dev.fairway.lb;

import java.util.List;

final class StrategyNames {
  /** Spelled out here on purpose: the test checks {@link Strategy#names()} against the documented list. */
  static final List<String> ALL = List.of("round-robin", "weighted-round-robin", "random", "least-connections",
      "power-of-two-choices", "key-affinity", "consistent-hash", "least-response-time", "concurrency-limited",
      "least-queueing");

  private StrategyNames() {}
}
