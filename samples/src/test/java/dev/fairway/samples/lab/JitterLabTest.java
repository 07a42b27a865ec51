package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A tiny jitter run with hedging on (time scale 0.02, 0.7 s measured): the columns are filled and
 * hedges are counted. Not a measurement; the tables worth quoting come from a quiet machine.
 */
class JitterLabTest {
  @Test
  void jitterWithHedging_reportsTailPercentilesAndHedgesSent(@TempDir Path dir) throws Exception {
    // A fixed 5 ms delay: the percentile window needs 2 s to refresh, longer than this run.
    LabOptions options = LabOptions.parse("--scenario", "jitter", "--strategies", "round-robin,least-response-time",
        "--time-scale", "0.02", "--duration", "700ms", "--hedge", "5ms",
        "--csv", dir.resolve("lab.csv").toString(), "--report", dir.resolve("lab.html").toString());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    List<RunResult> results = new Lab(options, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)).runAndReport();
    String stdout = out.toString(StandardCharsets.UTF_8);
    System.out.println(stdout);

    assertThat(results).hasSize(2);
    for (RunResult r : results) {
      assertThat(r.scenario()).isEqualTo(Scenario.JITTER);
      assertThat(r.errors()).as("errors with %s", r.strategy()).isZero();
      assertThat(r.hedges()).as("hedges with %s", r.strategy()).isPositive();
      assertThat(r.p999Ms).isGreaterThanOrEqualTo(r.p99Ms);
      assertThat(r.p99Ms).isGreaterThanOrEqualTo(r.p95Ms);
    }
    assertThat(stdout).contains("jitter: 100 users, 1% of requests on every backend take 20x (N=100)")
        .contains(", hedging 5ms").contains("p99.9 ms").contains("hedges");
    List<String> csv = Files.readAllLines(dir.resolve("lab.csv"));
    assertThat(csv.get(0)).endsWith(",per_backend,clients,in_zone_share,in_zone_before,in_zone_after,in_zone_swing,spill_s,p999_ms,hedges,client");
    for (String row : csv.subList(1, csv.size())) {
      String[] cells = row.split(",", -1);
      assertThat(cells).hasSize(22);
      assertThat(Long.parseLong(cells[20])).isPositive();
    }
  }

  @Test
  void jitterWithHedging_throughEveryFairwayClient_eachHedges_andHoldsAtMostItsLosers(@TempDir Path dir)
      throws Exception {
    LabOptions options = LabOptions.parse("--scenario", "jitter", "--strategies", "round-robin",
        "--client", "okhttp,jdk,hc5", "--time-scale", "0.02", "--duration", "700ms", "--hedge", "5ms",
        "--csv", dir.resolve("lab.csv").toString(), "--report", dir.resolve("lab.html").toString());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    List<RunResult> results = new Lab(options, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)).runAndReport();
    System.out.println(out.toString(StandardCharsets.UTF_8));

    assertThat(results).extracting(RunResult::client)
        .containsExactly(LabClient.Kind.OKHTTP, LabClient.Kind.JDK, LabClient.Kind.HC5);
    for (RunResult r : results) {
      assertThat(r.errors()).as("errors with %s", r.client()).isZero();
      // Each client's own meters (fairway.hedges{result=sent}) counted the hedges its adapter sent.
      assertThat(r.hedges()).as("hedges with %s", r.client()).isPositive();
      // A hedge's losing copy keeps its slot until a later call to its target completes or the
      // policy's loser hold (10 s by default) passes: after the last calls, a few losers may still
      // be held when the run reads what is in flight, never more than the hedges sent.
      assertThat(r.leftInFlight()).as("in flight after %s", r.client()).isLessThanOrEqualTo((int) r.hedges());
    }
  }
}
