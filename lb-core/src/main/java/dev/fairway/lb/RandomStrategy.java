package dev.fairway.lb;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Weighted random with an alias table: two random numbers per pick, whatever the target count. */
final class RandomStrategy extends BuiltinStrategy {
  @Override
  public String name() {
    return "random";
  }

  @Override
  AttachedStrategy attach(BalancerContext context) {
    return new AttachedStrategy() {
      @Override
      Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
        return new RandomSelector(snapshot, context.random);
      }
    };
  }

  static final class RandomSelector extends Selector {
    private final TrackedTarget[] targets;
    private final WeightedSampler sampler;
    private final RandomSource random;

    RandomSelector(TargetSnapshot snapshot, RandomSource random) {
      this.targets = snapshot.pickable;
      this.sampler = new WeightedSampler(snapshot.weights, snapshot.uniformWeights);
      this.random = random;
    }

    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      for (int attempt = 0; attempt < 4; attempt++) {
        TrackedTarget t = targets[sampler.sample(random)];
        if (!excluded(t, exclude)) {
          return t;
        }
      }
      return firstAllowed(targets, random.nextInt(targets.length), exclude);
    }
  }
}
