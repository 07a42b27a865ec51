package dev.fairway.samples.lab;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Runs {@link Scenario#KUBERNETES}: the rolling restart through EndpointSlice conditions once per drain
 * of {@link RollingRun#DRAINS} ({@link KubernetesRun}), then the zone-hints run ({@link ZoneHintsRun}),
 * and prints both tables. GET and POST errors by drain read as in {@code rolling}: 0 for both when the
 * drain is longer than the propagation.
 */
final class KubernetesLab {
  /** Both parts' results. */
  record Results(List<RollingRun.Result> rolling, List<ZoneHintsRun.Result> hints) {}

  private KubernetesLab() {}

  static Results run(LabOptions options, PrintStream progress) throws IOException, InterruptedException {
    List<RollingRun.Result> rolling = new ArrayList<>();
    for (Duration drain : RollingRun.DRAINS) {
      progress.printf(Locale.ROOT, "lab: kubernetes, drain %d ms (propagation %d ms, at time scale 1)%n",
          drain.toMillis(), RollingRun.PROPAGATION.toMillis());
      rolling.add(new KubernetesRun(options, drain).run());
    }
    progress.printf(Locale.ROOT, "lab: kubernetes, zone hints%n");
    return new Results(rolling, new ZoneHintsRun(options).run());
  }

  static String table(Results results, LabOptions options) {
    StringBuilder sb = new StringBuilder();
    sb.append(String.format(Locale.ROOT, "%nkubernetes: %d users, GET and POST in turn; 4 Pods behind a fake API server,"
        + " each in turn terminating (ready=false, serving, terminating) for the drain, then gone, then a new ready"
        + " Pod %d ms later; propagation %d ms (times at scale 1; time scale %s)%n", RollingRun.USERS,
        RollingRun.RESTART_AFTER.toMillis(), RollingRun.PROPAGATION.toMillis(), ResultTables.trim(options.timeScale())));
    sb.append(String.format(Locale.ROOT, "%-10s %-11s %9s %10s %9s %10s %8s  %s%n", "drain", "vs delay", "GET calls",
        "GET errors", "POST calls", "POST errors", "retries", "errors"));
    for (RollingRun.Result r : results.rolling()) {
      String versus = r.drain().compareTo(r.propagation()) > 0 ? "longer" : "shorter";
      sb.append(String.format(Locale.ROOT, "%-10s %-11s %9d %10d %9d %10d %8d  %s%n", r.drain().toMillis() + " ms",
          versus, r.getCalls(), r.getErrors(), r.postCalls(), r.postErrors(), r.retries(), r.errorSummary()));
    }
    sb.append(String.format(Locale.ROOT, "%nkubernetes zone hints: caller in zone a, %d users; Pods 1..6 in zones %s,"
        + " hinted for %s (allocation: 2 of 6 endpoints for zone a, 1 of them in zone a)%n", ZoneHintsRun.USERS,
        String.join("", ZoneHintsRun.ZONES), String.join("", ZoneHintsRun.HINTS)));
    sb.append(String.format(Locale.ROOT, "%-16s %8s %7s %14s %14s  %s%n", "setup", "calls", "errors", "to hinted (a)",
        "in zone a", "per Pod 1/2/3/4/5/6"));
    for (ZoneHintsRun.Result r : results.hints()) {
      StringBuilder per = new StringBuilder();
      for (long n : r.perPod()) {
        per.append(per.length() == 0 ? "" : "/").append(n);
      }
      sb.append(String.format(Locale.ROOT, "%-16s %8d %7d %13.1f%% %13.1f%%  %s%n", r.setup(), r.calls(), r.errors(),
          100 * r.hintedShare(), 100 * r.physicalShare(), per));
    }
    return sb.toString();
  }
}
