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

  /**
   * The limit when calls to some backends also cost the caller {@code extraSeconds[i]} outside the
   * backend's workers (the {@code zones} scenario's cross-zone hop). A user calling backend i is busy
   * S_i + P_i per call, one of its workers S_i, so the rate x_i at backend i is at most c_i / S_i, and
   * by Little's law over the users sum x_i (S_i + P_i) <= N. The most calls per second then come from
   * filling the backends in order of S_i + P_i (a fractional knapsack). With every P_i = 0 this is
   * {@link #rps(int, int[], double[])}.
   */
  public static double rps(int users, int[] workers, double[] serviceSeconds, double[] extraSeconds) {
    int n = serviceSeconds.length;
    Integer[] order = new Integer[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    Arrays.sort(order, (a, b) -> Double.compare(serviceSeconds[a] + extraSeconds[a], serviceSeconds[b] + extraSeconds[b]));
    double userSeconds = Math.max(0, users); // user-seconds per second left to spend
    double rate = 0;
    for (int k = 0; k < n && userSeconds > 0; k++) {
      int i = order[k];
      double perCall = serviceSeconds[i] + extraSeconds[i];
      double x = Math.min(workers[i] / serviceSeconds[i], userSeconds / perCall);
      rate += x;
      userSeconds -= x * perCall;
    }
    return rate;
  }

  /**
   * The {@code zones} scenario's limit, time-averaged: {@link #rps(int, int[], double[], double[])}
   * with every backend at {@code serviceSeconds}, the penalty on backends {@link
   * Scenario#ZONE_A_BACKENDS} and up, and backend-1 gone from one third of the window on.
   */
  static double averagedZonesRps(int users, int workersEach, double serviceSeconds, double penaltySeconds) {
    double before = zonesRps(users, workersEach, serviceSeconds, penaltySeconds, true);
    double after = zonesRps(users, workersEach, serviceSeconds, penaltySeconds, false);
    return before / 3 + after * 2 / 3;
  }

  static double zonesRps(int users, int workersEach, double serviceSeconds, double penaltySeconds, boolean backendOneUp) {
    int first = backendOneUp ? 0 : 1;
    int n = 4 - first;
    int[] c = new int[n];
    double[] s = new double[n];
    double[] p = new double[n];
    for (int i = first; i < 4; i++) {
      c[i - first] = workersEach;
      s[i - first] = serviceSeconds;
      p[i - first] = i >= Scenario.ZONE_A_BACKENDS ? penaltySeconds : 0;
    }
    return rps(users, c, s, p);
  }
}
