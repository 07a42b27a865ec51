package dev.fairway.samples.lab;

import java.util.Locale;

/**
 * The {@code zones} scenario's numbers, from a run's per-backend counts and time series: the share
 * of calls kept in zone a (backends 1 and 2) over the window, before backend-1's kill and after it,
 * how far the share swings after it, and how soon zone b took its part of the calls.
 */
final class ZoneShares {
  /** The time after the spill-over is cut into this many parts to see whether the share drifts or swings. */
  static final int SWING_PARTS = 4;

  private ZoneShares() {}

  /** Zone a's share of all successful calls started in the window. */
  static double overall(RunResult r) {
    long local = 0;
    long all = 0;
    for (int i = 0; i < r.perBackend.length; i++) {
      all += r.perBackend[i];
      if (i < Scenario.ZONE_A_BACKENDS) {
        local += r.perBackend[i];
      }
    }
    return all == 0 ? Double.NaN : (double) local / all;
  }

  /** Zone a's share of the completions in the buckets wholly before the kill. */
  static double before(RunResult r) {
    return share(r.seriesPerBackend, 0, firstAfter(r) - 1, false);
  }

  /** Zone a's share of the completions from the first bucket wholly after the kill to the window's end. */
  static double after(RunResult r) {
    return share(r.seriesPerBackend, firstAfter(r), windowBuckets(r), false);
  }

  /**
   * The largest distance of zone a's share in any quarter of the time from the spill-over to the
   * window's end from its level {@link #after}: the settling check (the target: within 5
   * points). Quarters, not single buckets: a bucket holds a few dozen calls, and the coin flips
   * that split them would swing by more than that with no oscillation at all.
   */
  static double swing(RunResult r) {
    double level = after(r);
    double spill = spillSeconds(r);
    if (Double.isNaN(level)) {
      return Double.NaN;
    }
    int from = Double.isNaN(spill) ? firstAfter(r)
        : (int) Math.ceil((r.faultAtSeconds + spill) / r.bucketSeconds);
    int to = windowBuckets(r);
    double worst = 0;
    for (int q = 0; q < SWING_PARTS; q++) {
      double s = share(r.seriesPerBackend, from + (to - from) * q / SWING_PARTS,
          from + (to - from) * (q + 1) / SWING_PARTS, false);
      if (!Double.isNaN(s)) {
        worst = Math.max(worst, Math.abs(s - level));
      }
    }
    return worst;
  }

  /**
   * Seconds from the kill to the end of the first bucket in which zone b's share reached half its
   * level after the kill; NaN when zone b got almost nothing after it (below 1%: no spill-over).
   */
  static double spillSeconds(RunResult r) {
    double remoteLevel = share(r.seriesPerBackend, firstAfter(r), windowBuckets(r), true);
    if (Double.isNaN(remoteLevel) || remoteLevel < 0.01 || Double.isNaN(r.faultAtSeconds)) {
      return Double.NaN;
    }
    int kill = (int) Math.floor(r.faultAtSeconds / r.bucketSeconds);
    for (int b = kill; b < windowBuckets(r); b++) {
      double s = share(r.seriesPerBackend, b, b + 1, true);
      if (!Double.isNaN(s) && s >= remoteLevel / 2) {
        return Math.max(0, (b + 1) * r.bucketSeconds - r.faultAtSeconds);
      }
    }
    return Double.NaN;
  }

  /** The CSV's zone columns (with their leading commas); empty fields for other scenarios. */
  static String csvColumns(RunResult r) {
    if (r.scenario != Scenario.ZONES) {
      return ",,,,,";
    }
    return String.format(Locale.ROOT, ",%.4f,%.4f,%.4f,%.4f,%s", overall(r), before(r), after(r), swing(r),
        Double.isNaN(spillSeconds(r)) ? "" : String.format(Locale.ROOT, "%.3f", spillSeconds(r)));
  }

  /** The table's line for one zones run. */
  static String line(RunResult r, double timeScale) {
    double spill = spillSeconds(r);
    return String.format(Locale.ROOT, "  %-21s in zone %.1f%% (before the kill %.1f%%, after %.1f%%, swing %.1f points);"
        + " %s%n", r.strategy, 100 * overall(r), 100 * before(r), 100 * after(r), 100 * swing(r),
        Double.isNaN(spill) ? "no spill-over to zone b"
            : String.format(Locale.ROOT, "spill-over within %.2f s of the kill (%.1f s at time scale 1)", spill,
                spill / timeScale));
  }

  private static int firstAfter(RunResult r) {
    return Double.isNaN(r.faultAtSeconds) ? 0 : (int) Math.ceil(r.faultAtSeconds / r.bucketSeconds);
  }

  private static int windowBuckets(RunResult r) {
    return Math.min(ScenarioRun.WINDOW_BUCKETS, r.seriesPerBackend.length);
  }

  /** Zone a's (or with {@code remote}, zone b's) share of completions in buckets [from, to); NaN if none. */
  private static double share(long[][] series, int from, int to, boolean remote) {
    long part = 0;
    long all = 0;
    for (int b = Math.max(0, from); b < Math.min(to, series.length); b++) {
      for (int i = 0; i < series[b].length; i++) {
        all += series[b][i];
        if ((i < Scenario.ZONE_A_BACKENDS) != remote) {
          part += series[b][i];
        }
      }
    }
    return all == 0 ? Double.NaN : (double) part / all;
  }
}
