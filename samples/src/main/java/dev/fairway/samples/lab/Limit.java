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
   * The limit averaged over a measured window whose users and live backends change with time (burst,
   * failure, recovery): the time average of {@link #rps} at each instant.
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
    boolean oneUp = scenario.backendOneUp(fraction);
    int live = oneUp ? serviceSeconds.length : serviceSeconds.length - 1;
    int[] c = new int[live];
    double[] s = new double[live];
    int k = 0;
    for (int i = 0; i < serviceSeconds.length; i++) {
      if (i == 0 && !oneUp) {
        continue;
      }
      c[k] = workersEach;
      s[k] = serviceSeconds[i];
      k++;
    }
    return rps(scenario.usersAt(fraction, users), c, s);
  }
}
