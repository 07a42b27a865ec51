package dev.fairway.samples.lab;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Runs {@link Scenario#ROLLING} once per drain of {@link RollingRun#DRAINS} and reports it: a table
 * row per drain with the caller-visible errors of GET and of POST, and a CSV of the same. The target
 * is 0 errors for both methods when the drain is longer than the propagation delay.
 */
final class RollingLab {
  static final String CSV_HEADER =
      "scenario,drain_ms,propagation_ms,time_scale,seconds,get_calls,get_errors,post_calls,post_errors,retries,errors\n";

  private RollingLab() {}

  static List<RollingRun.Result> run(LabOptions options, PrintStream progress) throws IOException,
      InterruptedException {
    List<RollingRun.Result> results = new ArrayList<>();
    for (Duration drain : RollingRun.DRAINS) {
      progress.printf(Locale.ROOT, "lab: rolling, drain %d ms (propagation %d ms, at time scale 1)%n",
          drain.toMillis(), RollingRun.PROPAGATION.toMillis());
      results.add(new RollingRun(options, drain).run());
    }
    return results;
  }

  static String table(List<RollingRun.Result> rows, LabOptions options) {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "%nrolling: %d users, GET and POST in turn; 4 backends, each in turn leaves"
        + " discovery, drains, stops, restarts %d ms later and rejoins; propagation %d ms (times at scale 1;"
        + " time scale %s)%n", RollingRun.USERS, RollingRun.RESTART_AFTER.toMillis(),
        RollingRun.PROPAGATION.toMillis(), ResultTables.trim(options.timeScale())));
    sb.append(String.format(Locale.ROOT, "%-10s %-11s %9s %10s %9s %10s %8s  %s%n", "drain", "vs delay", "GET calls",
        "GET errors", "POST calls", "POST errors", "retries", "errors"));
    for (RollingRun.Result r : rows) {
      String versus = r.drain().compareTo(r.propagation()) > 0 ? "longer" : "shorter";
      sb.append(String.format(Locale.ROOT, "%-10s %-11s %9d %10d %9d %10d %8d  %s%n", r.drain().toMillis() + " ms",
          versus, r.getCalls(), r.getErrors(), r.postCalls(), r.postErrors(), r.retries(), r.errorSummary()));
    }
    return sb.toString();
  }

  static String csvRow(RollingRun.Result r, LabOptions options) {
    return String.format(Locale.ROOT, "rolling,%d,%d,%s,%.3f,%d,%d,%d,%d,%d,\"%s\"%n", r.drain().toMillis(),
        r.propagation().toMillis(), ResultTables.trim(options.timeScale()), r.seconds(), r.getCalls(), r.getErrors(),
        r.postCalls(), r.postErrors(), r.retries(), r.errorSummary().replace("\"", "'").replace('\n', ' '));
  }

  /** {@code lab.csv} when rolling runs alone, else {@code lab-rolling.csv} next to it. */
  static Path csvFile(Path csv, LabOptions options) {
    if (options.scenarios().size() == 1) {
      return csv;
    }
    String name = csv.getFileName().toString();
    String stem = name.endsWith(".csv") ? name.substring(0, name.length() - 4) : name;
    return csv.resolveSibling(stem + "-rolling.csv");
  }

  static void writeCsv(Path file, List<RollingRun.Result> rows, LabOptions options) throws IOException {
    try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      w.write(CSV_HEADER);
      for (RollingRun.Result r : rows) {
        w.write(csvRow(r, options));
      }
    }
  }
}
