package dev.fairway.samples.lab;

import java.util.Arrays;

/**
 * The throughput no router can beat (DESIGN.md, "The scenario lab"): with N closed-loop users and
 * c_i workers at service time S_i, at most min(N, sum c_i) requests are in service at once, so the
 * rate is at most the sum of 1/S_i over the min(N, sum c_i) fastest workers.
 */
public final class Limit {
  private Limit() {}

  /**
   * The limit in requests per second.
   *
   * @param users N
   * @param workers c_i of each live backend
   * @param serviceSeconds S_i of each live backend, same order as {@code workers}
   */
  public static double rps(int users, int[] workers, double[] serviceSeconds) {
    int n = serviceSeconds.length;
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Double.compare(serviceSeconds[a], serviceSeconds[b]));
    int slots = Math.max(0, users);
    double rate = 0;
    for (int k = 0; k < n && slots > 0; k++) {
      int i = order[k];
      int used = Math.min(slots, workers[i]);
      rate += used / serviceSeconds[i];
      slots -= used;
    }
    return rate;
  }

  /**
   * The limit averaged over a measured window whose users and backends change with time (burst,
   * failure, recovery, slowdown, fastfail): the time average of {@link #rps} at each instant, where
   * a dead or fast-failing backend contributes no workers and a slowed one contributes at its new
   * service time (under jitter, every backend at its mean service time).
   */
  static double averagedRps(Scenario scenario, int users, int workersEach, double[] serviceSeconds) {
    int steps = 12_000;
    double sum = 0;
    for (int s = 0; s < steps; s++) {
      double f = (s + 0.5) / steps;
      sum += instant(scenario, f, users, workersEach, serviceSeconds);
    }
    return sum / steps;
  }

  static double instant(Scenario scenario, double fraction, int users, int workersEach, double[] serviceSeconds) {
    int n = serviceSeconds.length;
    int[] c = new int[n];
    double[] s = new double[n];
    int live = 0;
    for (int i = 0; i < n; i++) {
      boolean dead = i == 0 && !scenario.backendOneUp(fraction);
      boolean failing = i == Scenario.FAILING_BACKEND && scenario.fastFailingAt(fraction);
      if (dead || failing) {
        continue;
      }
      boolean slow = i == Scenario.SLOW_BACKEND && scenario.slowAt(fraction);
      c[live] = workersEach;
      s[live] = (slow ? serviceSeconds[i] * Scenario.SLOWDOWN_FACTOR : serviceSeconds[i]) * scenario.meanServiceFactor();
      live++;
    }
    return rps(scenario.usersAt(fraction, users), Arrays.copyOf(c, live), Arrays.copyOf(s, live));
  }
}
