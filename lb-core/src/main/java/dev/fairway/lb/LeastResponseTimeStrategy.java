package dev.fairway.lb;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Peak-EWMA, as Finagle and Linkerd score it: cost = latency average x (in-flight + 1) / weight,
 * lowest wins. The average is time-decayed (see {@link TargetLoad#decayedEwma}), so a target
 * that was slow and recovered is tried again. A target with no sample yet costs nothing while idle
 * (it gets one probe call) and a large penalty while that probe is out, so a new target is measured
 * before it is trusted, and not flooded.
 *
 * <p>Up to {@value #FULL_SCAN_LIMIT} targets every one is scored (two random choices would cap the
 * fastest of 4 targets at half the traffic); above that two weighted-random ones are compared. The
 * in-flight factor is what prevents herding: as the fastest target queues, its cost rises until the
 * others are cheaper.
 */
final class LeastResponseTimeStrategy extends BuiltinStrategy {
  static final int FULL_SCAN_LIMIT = 16;
  /** Cost of a target whose first call is still out: far above any real latency x load. */
  static final double UNMEASURED_PENALTY = 1e15;

  @Override
  public String name() {
    return "least-response-time";
  }

  @Override
  AttachedStrategy attach(BalancerContext context) {
    return new AttachedStrategy() {
      @Override
      Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
        return new LeastResponseTimeSelector(snapshot, context.random, context.tauNanos);
      }
    };
  }

  /** The target's cost; {@code perWeight} is 1 / its effective weight, {@code stepsPerNano} the decay rate. */
  static double cost(TrackedTarget t, double perWeight, long nowNanos, double stepsPerNano) {
    int inFlight = t.inFlight;
    double ewma = t.decayedEwma(nowNanos, stepsPerNano);
    if (ewma == 0.0) {
      return inFlight == 0 ? 0.0 : UNMEASURED_PENALTY * (inFlight + 1) * perWeight;
    }
    return ewma * (inFlight + 1) * perWeight;
  }

  static final class LeastResponseTimeSelector extends Selector {
    private final TrackedTarget[] targets;
    /** 1 / effective weight, so scoring multiplies instead of dividing. */
    private final double[] perWeight;
    private final @Nullable WeightedSampler sampler; // null: few enough targets to scan them all
    private final RandomSource random;
    private final double stepsPerNano;

    LeastResponseTimeSelector(TargetSnapshot snapshot, RandomSource random, double tauNanos) {
      this.targets = snapshot.pickable;
      this.perWeight = new double[targets.length];
      for (int i = 0; i < targets.length; i++) {
        perWeight[i] = 1.0 / snapshot.weights[i];
      }
      this.sampler =
          targets.length > FULL_SCAN_LIMIT ? new WeightedSampler(snapshot.weights, snapshot.uniformWeights) : null;
      this.random = random;
      this.stepsPerNano = TargetLoad.DECAY_STEPS_PER_TAU / tauNanos;
    }

    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      int n = targets.length;
      if (sampler == null) {
        int start = n == 1 ? 0 : random.nextInt(n);
        int best = -1;
        double bestCost = 0;
        for (int k = 0; k < n; k++) {
          int i = start + k;
          if (i >= n) {
            i -= n;
          }
          TrackedTarget t = targets[i];
          if (excluded(t, exclude)) {
            continue;
          }
          double c = cost(t, perWeight[i], nowNanos, stepsPerNano);
          if (best < 0 || c < bestCost) {
            best = i;
            bestCost = c;
          }
        }
        return best < 0 ? null : targets[best];
      }
      for (int attempt = 0; attempt < 4; attempt++) {
        int a = sampler.sample(random);
        int b = sampler.sampleOther(random, a);
        boolean okA = !excluded(targets[a], exclude);
        boolean okB = !excluded(targets[b], exclude);
        if (okA && okB) {
          return cost(targets[b], perWeight[b], nowNanos, stepsPerNano) < cost(targets[a], perWeight[a], nowNanos, stepsPerNano)
              ? targets[b]
              : targets[a];
        }
        if (okA) {
          return targets[a];
        }
        if (okB) {
          return targets[b];
        }
      }
      return firstAllowed(targets, random.nextInt(n), exclude);
    }
  }
}
