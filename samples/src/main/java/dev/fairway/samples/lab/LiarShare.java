package dev.fairway.samples.lab;

import java.util.Locale;

/**
 * The {@code liar} scenario's line per strategy: the liar's share of the calls against its share of
 * the capacity (its workers over its service time, of all backends'), the ratio the target
 * bounds (at most 1.5x).
 */
final class LiarShare {
  private LiarShare() {}

  /** Backend {@code index}'s share of the fleet's capacity: equal workers, so 1/s_i over the sum of 1/s. */
  static double capacityShare(double[] serviceSeconds, int index) {
    double all = 0;
    for (double s : serviceSeconds) {
      all += 1 / s;
    }
    return 1 / serviceSeconds[index] / all;
  }

  /** "  least-queueing  the liar (backend-4) carried 8.1% of the calls, 6.3% of the capacity: 1.30x". */
  static String line(RunResult r, LabOptions options) {
    double calls = r.backendShare(Scenario.LIAR_BACKEND);
    double capacity = capacityShare(options.serviceSeconds(), Scenario.LIAR_BACKEND);
    return String.format(Locale.ROOT, "  %-21s the liar (backend-%d) carried %.1f%% of the calls, %.1f%% of the capacity: %.2fx%n",
        r.strategy, Scenario.LIAR_BACKEND + 1, 100 * calls, 100 * capacity, calls / capacity);
  }
}
