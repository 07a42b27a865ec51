package dev.fairway.lb;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Fewest in-flight calls per unit of weight. A target's calls in flight are this balancer's own,
 * or, while the target's load report is fresh ({@link Pick#reportLoad}), the reported count from
 * every client plus this balancer's calls since the report ({@link FleetLoad#inFlight}):
 * in a fleet of many clients each balancer holds one or two calls per target, too few to tell
 * targets apart, and the report is what makes least connections work there. A report counts as far
 * as {@link ReportJudge} trusts it; the rest of a target's count is what this balancer's own traffic
 * there implies on the fleet's scale, not its own count alone: a target that always reports 0 would
 * otherwise carry N times an honest one's load among N clients. Counts are whole calls. Up to
 * {@value #FULL_SCAN_LIMIT} targets every one is
 * compared, starting at a random position so that ties do not favour the first target; above that a
 * weighted sample of {@value #SAMPLES} is compared, which keeps a pick O(1). Among equally loaded
 * targets the closer one by {@link Target#roundTripNanos()} wins (unknown last), and among equally
 * close ones the first from the random start.
 */
final class LeastConnectionsStrategy extends BuiltinStrategy {
  /** Beyond 16 a full scan costs more than the pick itself (one cache line per target). */
  static final int FULL_SCAN_LIMIT = 16;
  static final int SAMPLES = 8;

  @Override
  public String name() {
    return "least-connections";
  }

  @Override
  AttachedStrategy attach(BalancerContext context) {
    return new AttachedStrategy() {
      @Override
      Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
        return new LeastConnectionsSelector(snapshot, context.random, context.reportJudge);
      }
    };
  }

  /** True if a carries less load per weight than b: inFlightA / weightA < inFlightB / weightB. */
  static boolean lessLoaded(double inFlightA, long weightA, double inFlightB, long weightB) {
    return inFlightA * weightB < inFlightB * weightA;
  }

  static final class LeastConnectionsSelector extends Selector {
    private final TrackedTarget[] targets;
    private final long[] weights;
    private final @Nullable WeightedSampler sampler; // null: few enough targets to scan them all
    private final RandomSource random;
    /** Weighs each target's load report ({@link FleetLoad#load}). */
    private final ReportJudge judge;
    /** Round-trip ranks for ties ({@link Selector#roundTripRanks}); null when none is known. */
    private final long @Nullable [] roundTrip;

    LeastConnectionsSelector(TargetSnapshot snapshot, RandomSource random, ReportJudge judge) {
      this.judge = judge;
      this.targets = snapshot.pickable;
      this.weights = snapshot.weights;
      this.roundTrip = roundTripRanks(targets);
      this.sampler =
          targets.length > FULL_SCAN_LIMIT ? new WeightedSampler(snapshot.weights, snapshot.uniformWeights) : null;
      this.random = random;
    }

    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      int n = targets.length;
      double scale = judge.scale();
      int best = -1;
      double bestLoad = 0;
      if (sampler == null) {
        int start = n == 1 ? 0 : random.nextInt(n);
        for (int k = 0; k < n; k++) {
          int i = start + k;
          if (i >= n) {
            i -= n;
          }
          TrackedTarget t = targets[i];
          if (excluded(t, exclude)) {
            continue;
          }
          double load = FleetLoad.load(t, nowNanos, scale);
          if (best < 0 || lessLoaded(load, weights[i], bestLoad, weights[best])
              || (roundTrip != null && roundTrip[i] < roundTrip[best]
                  && !lessLoaded(bestLoad, weights[best], load, weights[i]))) {
            best = i;
            bestLoad = load;
          }
        }
        return best < 0 ? null : targets[best];
      }
      for (int k = 0; k < SAMPLES; k++) {
        int i = sampler.sample(random);
        TrackedTarget t = targets[i];
        if (excluded(t, exclude)) {
          continue;
        }
        double load = FleetLoad.load(t, nowNanos, scale);
        if (best < 0 || lessLoaded(load, weights[i], bestLoad, weights[best])) {
          best = i;
          bestLoad = load;
        }
      }
      return best < 0 ? firstAllowed(targets, random.nextInt(n), exclude) : targets[best];
    }
  }
}
