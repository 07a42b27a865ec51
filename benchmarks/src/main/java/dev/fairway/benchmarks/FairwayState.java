package dev.fairway.benchmarks;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;

/** Builds the balancers the benchmarks measure, through the public API only. */
final class FairwayState {
  private FairwayState() {}

  static boolean isKeyed(String strategy) {
    return strategy.equals("key-affinity") || strategy.equals("consistent-hash");
  }

  static LoadBalancer balancer(String strategy, int targets, boolean passiveHealth) {
    LoadBalancer lb =
        LoadBalancer.builder("bench")
            .targets(Fixtures.targets(targets).toArray(new Target[0]))
            .strategy(Strategy.named(strategy))
            .passiveHealth(passiveHealth ? PassiveHealth.defaults() : PassiveHealth.disabled())
            .build();
    warm(lb, strategy);
    return lb;
  }

  /**
   * A zone-aware balancer: the first half of the targets in zone "a" (the local one), the rest in
   * "b". With {@code spill}, every other target of zone a is reported unhealthy by the source, so
   * zone a keeps (1/2) / (3/4) = 2/3 of the calls and every pick takes the spill draw.
   */
  static LoadBalancer zonedBalancer(String strategy, int targets, boolean spill) {
    java.util.List<Target> list = new java.util.ArrayList<>(Fixtures.targets(targets));
    for (int i = 0; i < list.size(); i++) {
      boolean local = i < list.size() / 2;
      Target t = list.get(i).withZone(local ? "a" : "b");
      list.set(i, spill && local && i % 2 == 1 ? t.withHealthy(false) : t);
    }
    LoadBalancer lb =
        LoadBalancer.builder("bench")
            .targets(list.toArray(new Target[0]))
            .strategy(Strategy.named(strategy))
            .passiveHealth(PassiveHealth.disabled())
            .panicThreshold(0)
            .localZone("a")
            .build();
    warm(lb, strategy);
    return lb;
  }

  /**
   * Gives every target a latency sample (least response time and concurrency-limited score them)
   * and places every key of the universe (so key affinity measures cache hits).
   */
  static void warm(LoadBalancer lb, String strategy) {
    try {
      for (int i = 0; i < 20_000; i++) {
        lb.pick().success();
      }
      if (isKeyed(strategy)) {
        for (int k = 0; k < Fixtures.KEY_UNIVERSE; k++) {
          lb.pick("user-" + k).success();
        }
      }
    } catch (NoTargetAvailableException e) {
      throw new IllegalStateException(e);
    }
  }

  static Target pickAndRelease(LoadBalancer lb, String key) throws NoTargetAvailableException {
    Pick p = lb.pick(key);
    p.release();
    return p.target();
  }
}
