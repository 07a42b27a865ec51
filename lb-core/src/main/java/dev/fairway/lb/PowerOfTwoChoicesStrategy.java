package dev.fairway.lb;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Two distinct weighted-random targets; the one with fewer in-flight calls per weight wins (counted
 * as {@link LeastConnectionsStrategy} counts them, with a fresh load report when there is one); at
 * equal load the closer by {@link Target#roundTripNanos()} (unknown last). With two targets it always
 * compares both.
 */
final class PowerOfTwoChoicesStrategy extends BuiltinStrategy {
  @Override
  public String name() {
    return "power-of-two-choices";
  }

  @Override
  AttachedStrategy attach(BalancerContext context) {
    return new AttachedStrategy() {
      @Override
      Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
        return new P2cSelector(snapshot, context.random, context.reportJudge);
      }
    };
  }

  private static final class P2cSelector extends Selector {
    private final TrackedTarget[] targets;
    private final long[] weights;
    private final WeightedSampler sampler;
    private final RandomSource random;
    /** Weighs each target's load report ({@link FleetLoad#load}). */
    private final ReportJudge judge;
    /** Round-trip ranks for ties ({@link Selector#roundTripRanks}); null when none is known. */
    private final long @Nullable [] roundTrip;

    P2cSelector(TargetSnapshot snapshot, RandomSource random, ReportJudge judge) {
      this.judge = judge;
      this.targets = snapshot.pickable;
      this.roundTrip = roundTripRanks(targets);
      this.weights = snapshot.weights;
      this.sampler = new WeightedSampler(snapshot.weights, snapshot.uniformWeights);
      this.random = random;
    }

    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      int n = targets.length;
      if (n == 1) {
        return excluded(targets[0], exclude) ? null : targets[0];
      }
      double scale = judge.scale();
      for (int attempt = 0; attempt < 4; attempt++) {
        int a = sampler.sample(random);
        int b = sampler.sampleOther(random, a);
        TrackedTarget ta = targets[a];
        TrackedTarget tb = targets[b];
        boolean okA = !excluded(ta, exclude);
        boolean okB = !excluded(tb, exclude);
        if (okA && okB) {
          double loadA = FleetLoad.load(ta, nowNanos, scale);
          double loadB = FleetLoad.load(tb, nowNanos, scale);
          if (LeastConnectionsStrategy.lessLoaded(loadB, weights[b], loadA, weights[a])) {
            return tb;
          }
          // Equal load: the closer by round-trip time (unknown last); a when both are as close.
          return roundTrip != null && roundTrip[b] < roundTrip[a]
              && !LeastConnectionsStrategy.lessLoaded(loadA, weights[a], loadB, weights[b]) ? tb : ta;
        }
        if (okA) {
          return ta;
        }
        if (okB) {
          return tb;
        }
      }
      return firstAllowed(targets, random.nextInt(n), exclude);
    }
  }
}
