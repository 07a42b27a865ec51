package dev.fairway.lb;

/** The base of every strategy Fairway ships: {@link Strategy}'s factories return subclasses. */
abstract sealed class BuiltinStrategy implements Strategy
    permits RoundRobinStrategy, WeightedRoundRobinStrategy, RandomStrategy, LeastConnectionsStrategy,
        PowerOfTwoChoicesStrategy, KeyAffinityStrategy, ConsistentHashStrategy, LeastResponseTimeStrategy,
        ConcurrencyLimitedStrategy, LeastQueueingStrategy {
  static final java.util.List<String> NAMES = java.util.List.of("round-robin", "weighted-round-robin", "random",
      "least-connections", "power-of-two-choices", "key-affinity", "consistent-hash", "least-response-time",
      "concurrency-limited", "least-queueing");

  abstract StrategyInstance attach(BalancerContext context);

  @Override
  public String toString() {
    return name();
  }
}
