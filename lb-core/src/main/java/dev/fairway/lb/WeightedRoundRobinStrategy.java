package dev.fairway.lb;

import java.util.PriorityQueue;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Smooth weighted round robin from a schedule computed at rebuild time: one full cycle of picks,
 * read with a shared atomic cursor, so a pick is one increment and one array read. The cursor starts
 * at a random slot of the cycle, so a fleet's balancers do not start in lockstep.
 *
 * <p>The cycle is nginx's smooth weighted round robin (every step each target gains its weight, the
 * highest current value is chosen and loses the total), which interleaves as evenly as integer
 * weights allow. Weights are first divided by their greatest common divisor; a cycle longer than
 * {@value #MAX_CYCLE} slots is scaled down proportionally (every target keeps at least one slot), which
 * bounds memory at 256 KiB whatever the weights. Building nginx's cycle costs cycle x targets steps; when
 * that passes {@value #MAX_NGINX_STEPS} the same proportions are laid out by earliest deadline first with
 * staggered phases, in O(cycle log targets).
 */
final class WeightedRoundRobinStrategy extends BuiltinStrategy {
  static final int MAX_CYCLE = 1 << 16;
  static final long MAX_NGINX_STEPS = 1L << 22;

  @Override
  public String name() {
    return "weighted-round-robin";
  }

  @Override
  AttachedStrategy attach(BalancerContext context) {
    PaddedCounter cursor = PaddedCounter.randomStart(context.random);
    return new AttachedStrategy() {
      @Override
      Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
        if (snapshot.uniformWeights) {
          return new RoundRobinStrategy.RoundRobinSelector(snapshot.pickable, cursor);
        }
        return new ScheduleSelector(snapshot.pickable, schedule(snapshot.weights), cursor);
      }
    };
  }

  /** One cycle of target indices in smooth order, exact for the (reduced) integer weights. */
  static int[] schedule(long[] rawWeights) {
    long[] w = reduce(rawWeights);
    long total = 0;
    for (long x : w) {
      total += x;
    }
    int n = w.length;
    int cycle = (int) total;
    int[] out = new int[cycle];
    if ((long) cycle * n <= MAX_NGINX_STEPS) {
      long[] current = new long[n];
      for (int step = 0; step < cycle; step++) {
        int best = 0;
        for (int i = 0; i < n; i++) {
          current[i] += w[i];
          if (current[i] > current[best]) {
            best = i;
          }
        }
        current[best] -= total;
        out[step] = best;
      }
      return out;
    }
    // Earliest deadline first: target i's k-th slot is due at (k + phase_i) / w_i, phases staggered
    // across targets so that equal deadlines (and the bursts they cause) are rare.
    PriorityQueue<double[]> queue = new PriorityQueue<>(n, (a, b) -> a[0] != b[0] ? Double.compare(a[0], b[0])
        : Double.compare(a[1], b[1]));
    for (int i = 0; i < n; i++) {
      double phase = (i + 1.0) / (n + 1.0);
      queue.add(new double[] {phase / w[i], i, 0});
    }
    for (int step = 0; step < cycle; step++) {
      double[] head = queue.poll();
      int i = (int) head[1];
      out[step] = i;
      double k = head[2] + 1;
      head[0] = (k + (i + 1.0) / (n + 1.0)) / w[i];
      head[2] = k;
      queue.add(head);
    }
    return out;
  }

  /** Divides by the gcd, then scales down (keeping every weight >= 1) to fit MAX_CYCLE. */
  static long[] reduce(long[] weights) {
    long g = 0;
    for (long x : weights) {
      g = gcd(g, x);
    }
    long[] w = new long[weights.length];
    long total = 0;
    for (int i = 0; i < w.length; i++) {
      w[i] = weights[i] / g;
      total += w[i];
    }
    if (total <= MAX_CYCLE) {
      return w;
    }
    int budget = Math.max(MAX_CYCLE, w.length);
    double scale = (double) budget / total;
    long[] scaled = new long[w.length];
    for (int i = 0; i < w.length; i++) {
      scaled[i] = Math.max(1, Math.round(w[i] * scale));
    }
    return scaled;
  }

  private static long gcd(long a, long b) {
    while (b != 0) {
      long t = a % b;
      a = b;
      b = t;
    }
    return a;
  }

  static final class ScheduleSelector extends Selector {
    private final TrackedTarget[] targets;
    private final int[] schedule;
    private final PaddedCounter cursor;

    ScheduleSelector(TrackedTarget[] targets, int[] schedule, PaddedCounter cursor) {
      this.targets = targets;
      this.schedule = schedule;
      this.cursor = cursor;
    }

    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      int slot = cursor.nextIndex(schedule.length);
      TrackedTarget chosen = targets[schedule[slot]];
      if (exclude == null || !exclude.contains(chosen.target)) {
        return chosen;
      }
      // A few more slots keep the proportions among the rest; then any allowed target will do.
      for (int i = 1; i < 8; i++) {
        int s = slot + i;
        TrackedTarget t = targets[schedule[s >= schedule.length ? s - schedule.length : s]];
        if (!exclude.contains(t.target)) {
          return t;
        }
      }
      return firstAllowed(targets, schedule[slot], exclude);
    }
  }
}
