package dev.fairway.lb;

/** The base of every strategy Fairway ships: {@link Strategy}'s factories return subclasses. */
abstract class BuiltinStrategy implements Strategy {
  static final java.util.List<String> NAMES = java.util.List.of("round-robin", "weighted-round-robin", "random",
      "least-connections", "power-of-two-choices", "key-affinity", "consistent-hash", "least-response-time",
      "concurrency-limited");

  abstract StrategyInstance attach(BalancerContext context);

  @Override
  public String toString() {
    return name();
  }
}
