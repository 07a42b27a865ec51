package dev.fairway.lb;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Least queueing: send each call where a worker is free, and when every target queues, where the
 * call would finish first. Throughput is lost in one way only: a target with idle workers while
 * calls wait elsewhere. Latency-equalising strategies lose it by design: with 100 callers and the
 * lab's four targets (50/150/300/500 ms, 8 workers each) latencies equalise near 420 ms, below the
 * slowest target's service time, so it never gets a call and the fleet stays at 240 of 256 rps.
 * Keeping every target's workers busy and queueing the excess where service is fastest reaches the
 * limit.
 *
 * <p>So targets are classified first, as Google's Prequal does, by the worker state the hedge's
 * free-worker pick reads too ({@link FleetLoad#workers}). A target is <em>cold</em> while its
 * load report is fresh ({@link Pick#reportLoad}, at most 5 s old) and says a worker is free: its
 * calls in flight from every client (the report's count plus this balancer's calls since, {@link
 * FleetLoad#inFlight}) are fewer than its workers (the report's count / its utilization),
 * or it reported utilization 0 and this balancer sent it nothing since. Every other target is
 * <em>hot</em>, and so is one whose last call failed, whatever it reports (a fast 503 is no free
 * worker), with its cost multiplied by 4 for every failure in a row: measured by this balancer
 * alone, it would look cheap next to a reporting target's fleet-wide queue. The cold target with
 * the shortest service time (its lowest latency of the last two windows of 16 of them, {@link
 * TargetLoad#recordSuccessLatency}) per weight wins; if none is cold, the target where a new call
 * would be done first: with a fresh report, service time x (calls in flight from every client + 1)
 * / workers; without one, or with a claim of workers the plausibility rules capped, {@link
 * LeastResponseTimeStrategy}'s peak-EWMA cost, latency x (this balancer's calls + 1).
 *
 * <p>Without a report that tells (none fresh, or one that implies no workers and no idle), a
 * balancer that is its targets' only client still knows where a worker is
 * free: every call they serve is its own. So each target learns from this balancer's calls how many
 * it serves at once without queueing, the way TCP Vegas reads a queue from round-trip times ({@link
 * LearnedConcurrency}): a call no slower than 1.1 x the service time did not wait, and
 * the estimate rises to the number of our calls that were in flight when it was sent; one call above
 * the estimate is a probe, and a probe that waited (over 1.5 x) pauses probing for a window; a call
 * at or below the estimate that waited lowers it by one. While fewer of our calls than that are in
 * flight, or as many and probing is not paused, the target is cold. In a fleet the same counts would
 * send every balancer to the target that looks idle to each of them, so the second call in a row
 * that was our only one on its target and still waited ({@link OtherClients}; one could be a pause)
 * turns this off: for 64 x that service time, at least a second, a balancer without reports scores
 * exactly as least response time.
 *
 * <p>Why it is the default, and why a report beats a latency-only "cold" rule in a fleet (each
 * client's verdict on a target it rarely calls is old; a report carries what every client did): the
 * lab runs in {@code docs/results/2026-12-01-lab-default-run.md}. Its cost there: a higher p99 in
 * the fleet with reports, since it also keeps the slowest target's workers busy.
 *
 * <p>Up to {@value #FULL_SCAN_LIMIT} targets every one is a candidate (two random choices would
 * cap the fastest of four targets at half the calls); above that two distinct weighted-random ones,
 * so a pick stays O(1). Lock-free and allocation-free; one clock read per pick (the balancer's).
 */
final class LeastQueueingStrategy extends BuiltinStrategy {
  static final int FULL_SCAN_LIMIT = 16;

  @Override
  public String name() {
    return "least-queueing";
  }

  @Override
  AttachedStrategy attach(BalancerContext context) {
    return new AttachedStrategy() {
      @Override
      Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
        return new LeastQueueingSelector(snapshot, context.random, context.tauNanos, context.otherClients);
      }

      // Concurrency is learned from every success whatever the strategy (Completions#success), so
      // that LoadBalancer#pickWithFreeWorker can tell for every strategy too.
    };
  }

  static final class LeastQueueingSelector extends Selector {
    private final TrackedTarget[] targets;
    /** 1 / effective weight, so scoring multiplies instead of dividing. */
    private final double[] perWeight;
    private final @Nullable WeightedSampler sampler; // null: few enough targets to scan them all
    private final RandomSource random;
    private final double stepsPerNano;
    private final OtherClients otherClients;

    LeastQueueingSelector(TargetSnapshot snapshot, RandomSource random, double tauNanos, OtherClients otherClients) {
      this.targets = snapshot.pickable;
      this.perWeight = new double[targets.length];
      for (int i = 0; i < targets.length; i++) {
        perWeight[i] = 1.0 / snapshot.weights[i];
      }
      this.sampler = targets.length > FULL_SCAN_LIMIT
          ? new WeightedSampler(snapshot.weights, snapshot.uniformWeights) : null;
      this.random = random;
      this.stepsPerNano = TargetLoad.DECAY_STEPS_PER_TAU / tauNanos;
      this.otherClients = otherClients;
    }

    /**
     * The score of target {@code i} at {@code now}: a cold target scores its service time per
     * weight (>= 0), a hot one {@code -1 - cost} (< 0), so that one comparison, {@link #better}, ranks
     * cold before hot without mixing their units.
     */
    double score(int i, long now, boolean alone) {
      TrackedTarget t = targets[i];
      double w = perWeight[i];
      int failures = t.consecutiveFailures;
      if (failures != 0) {
        // x 4 per failure in a row (up to 8): its own cost is measured by this balancer alone and
        // would look cheap next to a reporting target's fleet-wide queue. It still decays, so a
        // target that failed and came back is tried again (a rank below every other would never be):
        // among the hot ones as its cost falls below theirs, and among the cold ones, at that cost,
        // once it has fallen below the target's own service time with nothing of ours in flight.
        double penalised = Math.scalb(LeastResponseTimeStrategy.cost(t, w, now, stepsPerNano), 2 * Math.min(failures, 8));
        return t.inFlight == 0 && penalised < t.minLatencyNanos * w ? penalised : -1 - penalised;
      }
      if (t.minLatencyNanos == 0.0 && t.inFlight == 0) {
        return 0.0; // never answered us: one call measures it (as least response time's zero cost)
      }
      double service = t.minLatencyNanos;
      FleetLoad.WorkerState state = FleetLoad.workers(t, now, alone);
      if (state == FleetLoad.WorkerState.FREE) {
        return service * w; // cold: a worker is free
      }
      // A hot target is scored by its report only if its workers are the report's own: a capped
      // claim's workers were cut to deny free workers we could not verify (ReportPlausibility#record),
      // and dividing by them would price it as a one-worker queue, which a lone claim of idleness
      // could never leave while its report stays fresh. It is scored as an unreported target instead,
      // by what this balancer measures itself, which decays: never frozen out.
      double workers = t.reportedWorkers;
      if (state == FleetLoad.WorkerState.BUSY && workers > 0 && service > 0 && !t.reportCapped
          && t.reportFresh(now, TargetLoad.REPORT_TTL_NANOS)) {
        return -1 - service * (FleetLoad.inFlight(t, now) + 1) / workers * w; // when the new call would be done
      }
      return -1 - LeastResponseTimeStrategy.cost(t, w, now, stepsPerNano);
    }

    /** True if score {@code x} beats score {@code y}: cold beats hot; lower latency, or lower cost. */
    static boolean better(double x, double y) {
      if (x >= 0) {
        return y < 0 || x < y;
      }
      return y < 0 && x > y;
    }

    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      int n = targets.length;
      boolean alone = !otherClients.present(nowNanos);
      if (sampler == null) {
        int start = n == 1 ? 0 : random.nextInt(n);
        int best = -1;
        double bestScore = 0;
        for (int k = 0; k < n; k++) {
          int i = start + k;
          if (i >= n) {
            i -= n;
          }
          if (excluded(targets[i], exclude)) {
            continue;
          }
          double s = score(i, nowNanos, alone);
          if (best < 0 || better(s, bestScore)) {
            best = i;
            bestScore = s;
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
          return better(score(b, nowNanos, alone), score(a, nowNanos, alone)) ? targets[b] : targets[a];
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
