package dev.fairway.lb;

/** The base of every strategy Fairway ships: {@link Strategy}'s factories return subclasses. */
abstract sealed class BuiltinStrategy implements Strategy
    permits RoundRobinStrategy, WeightedRoundRobinStrategy, RandomStrategy, LeastConnectionsStrategy,
        PowerOfTwoChoicesStrategy, KeyAffinityStrategy, ConsistentHashStrategy, LeastResponseTimeStrategy,
        ConcurrencyLimitedStrategy, LeastQueueingStrategy {
  static final java.util.List<String> NAMES = java.util.List.of("round-robin", "weighted-round-robin", "random",
      "least-connections", "power-of-two-choices", "key-affinity", "consistent-hash", "least-response-time",
      "concurrency-limited", "least-queueing");

  /** This strategy's state for one balancer, choosing over every target it is given. */
  abstract AttachedStrategy attach(BalancerContext context);

  /**
   * This strategy attached to a balancer: with a local zone, wrapped for zone-aware routing
   * ({@link ZoneRouting}), unless it ranks targets by zone itself.
   */
  final AttachedStrategy attachTo(BalancerContext context) {
    return context.localZone.isEmpty() || ranksByZone() ? attach(context) : new ZoneRouting(this, context);
  }

  /** True for a strategy that prefers the local zone itself, so zone-aware routing leaves it alone. */
  boolean ranksByZone() {
    return false;
  }

  /** True for a strategy that places keys: with zones, a key's side then follows from its hash, not a draw. */
  boolean placesKeys() {
    return false;
  }

  @Override
  public String toString() {
    return name();
  }
}
