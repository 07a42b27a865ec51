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
