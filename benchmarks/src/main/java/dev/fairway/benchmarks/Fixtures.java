package dev.fairway.benchmarks;

import dev.fairway.lb.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Inputs shared by every benchmark, Fairway's and the peers', so that all of them balance the same
 * targets with the same weights and hash the same keys.
 */
final class Fixtures {
  /** Number of pre-generated keys per thread cursor; a power of two so the index is a mask. */
  static final int KEY_SAMPLES = 1 << 13;
  /** Distinct keys the Zipf distribution draws from. */
  static final int KEY_UNIVERSE = 10_000;
  /** Zipf exponent: a few hot keys, a long tail (as client IPs and user ids look). */
  static final double ZIPF_S = 1.0;

  private Fixtures() {}

  static String host(int i) {
    return "10." + ((i >> 16) & 0xFF) + "." + ((i >> 8) & 0xFF) + "." + (i & 0xFF);
  }

  static int port(int i) {
    return 8080;
  }

  /** Weights 1, 2, 3, 4, 1, 2, ...: unequal, so the weighted strategies take their weighted path. */
  static int weight(int i) {
    return 1 + (i % 4);
  }

  /** {@code n} targets on 10.x.y.z:8080 with weights {@link #weight}. */
  static List<Target> targets(int n) {
    return targets(n, 0);
  }

  /** As {@link #targets(int)} but numbered from {@code first}: lists with other ids. */
  static List<Target> targets(int n, int first) {
    List<Target> out = new ArrayList<>(n);
    for (int i = first; i < first + n; i++) {
      out.add(Target.of(host(i), port(i)).withWeight(weight(i)));
    }
    return List.copyOf(out);
  }

  /**
   * {@link #KEY_SAMPLES} keys drawn from a Zipf(s = {@value #ZIPF_S}) distribution over
   * {@link #KEY_UNIVERSE} distinct keys ("user-0" the hottest). Deterministic for a seed; the
   * strings are distinct instances per call, with their hash codes cached as a real request's
   * header value would not be, which only matters to peers that use {@code String.hashCode}.
   */
  static String[] zipfKeys(long seed) {
    double[] cdf = new double[KEY_UNIVERSE];
    double sum = 0;
    for (int k = 0; k < KEY_UNIVERSE; k++) {
      sum += 1.0 / Math.pow(k + 1, ZIPF_S);
      cdf[k] = sum;
    }
    SplittableRandom random = new SplittableRandom(seed);
    String[] universe = new String[KEY_UNIVERSE];
    for (int k = 0; k < KEY_UNIVERSE; k++) {
      universe[k] = "user-" + k;
    }
    String[] keys = new String[KEY_SAMPLES];
    for (int i = 0; i < KEY_SAMPLES; i++) {
      double u = random.nextDouble() * sum;
      int lo = 0;
      int hi = KEY_UNIVERSE - 1;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (cdf[mid] < u) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      keys[i] = universe[lo];
    }
    return keys;
  }
}
