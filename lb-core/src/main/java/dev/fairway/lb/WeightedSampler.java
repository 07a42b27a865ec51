package dev.fairway.lb;

/**
 * Draws an index in proportion to weights in O(1) with Vose's alias method (one uniform index, one
 * uniform double). Built once per snapshot; immutable.
 */
final class WeightedSampler {
  private static final double[] NO_PROBABILITIES = new double[0];
  private static final int[] NO_ALIASES = new int[0];

  private final int n;
  private final boolean uniform;
  private final double[] probability;
  private final int[] alias;

  WeightedSampler(long[] weights, boolean uniform) {
    this.n = weights.length;
    this.uniform = uniform;
    if (uniform) {
      probability = NO_PROBABILITIES; // never read: sample() returns the uniform index first
      alias = NO_ALIASES;
      return;
    }
    probability = new double[n];
    alias = new int[n];
    double total = 0;
    for (long w : weights) {
      total += w;
    }
    double[] scaled = new double[n];
    int[] small = new int[n];
    int[] large = new int[n];
    int s = 0;
    int l = 0;
    for (int i = 0; i < n; i++) {
      scaled[i] = weights[i] * n / total;
      if (scaled[i] < 1.0) {
        small[s++] = i;
      } else {
        large[l++] = i;
      }
    }
    while (s > 0 && l > 0) {
      int less = small[--s];
      int more = large[--l];
      probability[less] = scaled[less];
      alias[less] = more;
      scaled[more] = (scaled[more] + scaled[less]) - 1.0;
      if (scaled[more] < 1.0) {
        small[s++] = more;
      } else {
        large[l++] = more;
      }
    }
    while (l > 0) {
      probability[large[--l]] = 1.0;
    }
    while (s > 0) {
      probability[small[--s]] = 1.0; // rounding leftovers
    }
  }

  int sample(RandomSource random) {
    int i = random.nextInt(n);
    if (uniform) {
      return i;
    }
    return random.nextDouble() < probability[i] ? i : alias[i];
  }

  /**
   * An index other than {@code a} (there must be at least two). Equal weights: uniform over the
   * other n - 1 exactly (one draw, shifted past {@code a}), so every pair is compared equally often
   * and two targets are always both compared. Unequal weights: in proportion to weight among the
   * others, by redrawing up to three times; after that (a target holding almost all the weight) the
   * neighbour of {@code a}.
   */
  int sampleOther(RandomSource random, int a) {
    if (uniform) {
      int b = random.nextInt(n - 1);
      return b >= a ? b + 1 : b;
    }
    for (int i = 0; i < 3; i++) {
      int b = sample(random);
      if (b != a) {
        return b;
      }
    }
    return a + 1 == n ? 0 : a + 1;
  }
}
