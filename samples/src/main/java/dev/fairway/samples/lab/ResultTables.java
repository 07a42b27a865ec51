package dev.fairway.samples.lab;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** The lab's text outputs: one table per scenario for people, and the CSV for tools. */
final class ResultTables {
  static final String CSV_HEADER =
      "scenario,strategy,users,throughput_rps,limit_rps,share_of_limit,mean_ms,p50_ms,p95_ms,p99_ms,errors,retries,per_backend,clients"
          + ",in_zone_share,in_zone_before,in_zone_after,in_zone_swing,spill_s"
          + ",p999_ms,hedges,client";

  private ResultTables() {}

  /**
   * The table of one scenario's results, with a title line naming N and the limit. With more than
   * one {@code --client}, a client column after the strategy (each strategy's rows together, a row
   * per client), and the lines below the table name the client too.
   */
  static String table(Scenario scenario, List<RunResult> rows, LabOptions options) {
    boolean clients = options.clientKinds().size() > 1;
    StringBuilder out = new StringBuilder();
    RunResult first = rows.get(0);
    out.append(String.format(Locale.ROOT, "%s: %s (N=%d%s), limit %.1f rps, time scale %s, %.1f s measured%s%s%n",
        scenario.id(), scenario.shape(), first.users, first.clients == 1 ? "" : ", K=" + first.clients, first.limitRps,
        trim(options.timeScale()), first.measuredSeconds, options.loadReports() ? ", load reports on" + options.styleNote() : "",
        options.hedging() != null ? ", hedging " + options.hedge : ""));
    String head = String.format(Locale.ROOT, "  %-21s%s %9s %7s %8s %8s %8s %8s %9s %7s %7s %13s  %s",
        "strategy", clients ? String.format(Locale.ROOT, " %-6s", "client") : "", "rps", "%limit", "mean ms", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms", "errors", "retries",
        "hedges", "per backend (share)");
    out.append(head).append('\n');
    for (RunResult r : rows) {
      out.append(String.format(Locale.ROOT, "  %-21s%s %9.1f %6.1f%% %8.1f %8.1f %8.1f %8.1f %9.1f %7d %7d %13s  %s%n",
          r.strategy, clients ? String.format(Locale.ROOT, " %-6s", r.client.id()) : "", r.throughputRps(), 100 * r.shareOfLimit(), r.meanMs, r.p50Ms, r.p95Ms, r.p99Ms, r.p999Ms, r.errors,
          r.retries, String.format(Locale.ROOT, "%d (%.1f%%)", r.hedges, 100 * r.hedgeShare()),
          perBackend(r) + "  (" + shares(r) + ")"));
    }
    for (RunResult r : rows) {
      if (!r.errorSummary.isEmpty()) {
        out.append(String.format(Locale.ROOT, "  %-21s errors: %s%n", label(r, clients), r.errorSummary));
      }
    }
    if (scenario == Scenario.SLOWDOWN) {
      for (RunResult r : rows) {
        out.append(String.format(Locale.ROOT, "  %-21s backend-1 %dx slower from %.2f s%n", label(r, clients),
            Scenario.SLOWDOWN_FACTOR, r.faultAtSeconds));
      }
    }
    if (scenario == Scenario.FASTFAIL) {
      for (RunResult r : rows) {
        out.append(String.format(Locale.ROOT, "  %-21s backend-2 answers 503 from %.2f s; %s%n", label(r, clients),
            r.faultAtSeconds, failing(r, options)));
      }
    }
    if (scenario == Scenario.ZONES) {
      for (RunResult r : rows) {
        out.append(ZoneShares.line(r, options.timeScale()));
      }
    }
    if (scenario == Scenario.LIAR) {
      for (RunResult r : rows) {
        out.append(LiarShare.line(r, options));
      }
    }
    if (scenario.killsBackend()) {
      for (RunResult r : rows) {
        out.append(String.format(Locale.ROOT, "  %-21s backend-1 killed at %.2f s with %d calls in flight to it",
            label(r, clients), r.faultAtSeconds, r.inFlightAtKill));
        if (scenario == Scenario.RECOVERY) {
          out.append(String.format(Locale.ROOT, "; back at %.2f s; carried %.0f%% of its %.1f%% share again %s",
              r.restartAtSeconds, 100 * ScenarioRun.RECOVERED_FRACTION, 100 * r.baselineShare, recovery(r, options)));
        }
        out.append('\n');
      }
    }
    return out.toString();
  }

  /** Fastfail: "0.42% of the requests from 0.20 s after it on (1 s at time scale 1) reached it (target: < 1%)". */
  static String failing(RunResult r, LabOptions options) {
    double grace = options.scaled(Scenario.FASTFAIL_GRACE).toNanos() / 1e9;
    if (Double.isNaN(r.failingShare)) {
      return String.format(Locale.ROOT, "the window ended within %.2f s of it (1 s at time scale 1)", grace);
    }
    return String.format(Locale.ROOT, "%.2f%% of the requests from %.2f s after it on (1 s at time scale 1) reached it"
        + " (target: < 1%%)", 100 * r.failingShare, grace);
  }

  /** The row's strategy, and its client when the run compares clients. */
  static String label(RunResult r, boolean clients) {
    return clients ? r.strategy + " (" + r.client.id() + ")" : r.strategy;
  }

  static String recovery(RunResult r, LabOptions options) {
    if (Double.isNaN(r.recoverySeconds)) {
      double watched = r.observedSeconds - r.restartAtSeconds;
      return String.format(Locale.ROOT, "not within the %.2f s watched after the restart (%.1f s at time scale 1)",
          watched, watched / options.timeScale());
    }
    return String.format(Locale.ROOT, "after %.2f s (%.1f s at time scale 1)", r.recoverySeconds,
        r.recoverySeconds / options.timeScale());
  }

  static String perBackend(RunResult r) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < r.perBackend.length; i++) {
      if (i > 0) {
        sb.append('/');
      }
      sb.append(r.perBackend[i]);
    }
    return sb.toString();
  }

  static String shares(RunResult r) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < r.perBackend.length; i++) {
      if (i > 0) {
        sb.append('/');
      }
      sb.append(Math.round(100 * r.backendShare(i)));
    }
    return sb.append('%').toString();
  }

  static String csvRow(RunResult r) {
    return String.format(Locale.ROOT, "%s,%s,%d,%.1f,%.1f,%.3f,%.1f,%.1f,%.1f,%.1f,%d,%d,%s,%d",
        r.scenario.id(), r.strategy, r.users, r.throughputRps(), r.limitRps, r.shareOfLimit(), r.meanMs, r.p50Ms,
        r.p95Ms, r.p99Ms, r.errors, r.retries, perBackend(r), r.clients) + ZoneShares.csvColumns(r)
        + String.format(Locale.ROOT, ",%.1f,%d,%s", r.p999Ms, r.hedges, r.client.id());
  }

  static void writeCsv(Path file, List<RunResult> results) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      w.write(CSV_HEADER);
      w.write('\n');
      for (RunResult r : results) {
        w.write(csvRow(r));
        w.write('\n');
      }
    }
  }

  static String trim(double d) {
    return d == Math.rint(d) ? String.format(Locale.ROOT, "%.1f", d) : Double.toString(d);
  }
}
