package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code zones} scenario at a tiny time scale for one strategy of each family, then its CSV
 * rows and columns and its table; and its limit formula. Asserts no throughput or latency, only
 * what the run must show whatever the machine: zone a keeps every call while it is whole, and
 * zone b gets calls after the kill (for the strategies that split).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ZonesScenarioTest {
  private static final double SCALE = 0.05;
  private static final List<String> STRATEGIES =
      List.of("round-robin", "power-of-two-choices", "least-response-time", "consistent-hash", "concurrency-limited");

  private List<String[]> rows;
  private String header;
  private String stdout;

  @BeforeAll
  void runZones(@TempDir Path dir) throws Exception {
    LabOptions options = LabOptions.builder()
        .scenarios("zones")
        .strategies(String.join(",", STRATEGIES))
        .timeScale(SCALE)
        .duration(Duration.ofMillis(1500))
        .csv(dir.resolve("zones.csv"))
        .report(dir.resolve("zones.html"))
        .build();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new Lab(options, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)).runAndReport();
    stdout = out.toString(StandardCharsets.UTF_8);
    System.out.println(stdout);
    List<String> lines = Files.readAllLines(dir.resolve("zones.csv"));
    header = lines.get(0);
    rows = new ArrayList<>();
    for (String line : lines.subList(1, lines.size())) {
      rows.add(line.split(",", -1));
    }
  }

  @Test
  void csv_oneRowPerStrategy_withTheZoneColumnsAfterClients() {
    assertThat(header).endsWith(",per_backend,clients,in_zone_share,in_zone_before,in_zone_after,in_zone_swing,spill_s,p999_ms,hedges,client");
    assertThat(rows).hasSize(STRATEGIES.size());
    for (int i = 0; i < rows.size(); i++) {
      String[] row = rows.get(i);
      assertThat(row).hasSize(22);
      assertThat(row[0]).isEqualTo("zones");
      assertThat(row[1]).isEqualTo(STRATEGIES.get(i));
      assertThat(row[2]).isEqualTo("12");
      for (int c = 14; c <= 17; c++) {
        assertThat(Double.parseDouble(row[c])).as("%s column %d", row[1], c).isBetween(0.0, 1.0);
      }
    }
  }

  @Test
  void wholeZoneA_keepsEveryCall_andTheLossSpillsToZoneB() {
    for (String[] row : rows) {
      assertThat(Double.parseDouble(row[15])).as("%s in zone before the kill", row[1]).isEqualTo(1.0);
      if (!row[1].equals("concurrency-limited")) {
        // Zone a keeps 2/3 by the rule; zone b gets calls, and the spill time is known.
        assertThat(Double.parseDouble(row[16])).as("%s in zone after", row[1]).isLessThan(0.9);
        assertThat(row[18]).as("%s spill_s", row[1]).isNotEmpty();
      }
    }
  }

  @Test
  void table_saysWhatWasKeptInZone() {
    assertThat(stdout).contains("zones: " + Scenario.ZONES.shape());
    for (String strategy : STRATEGIES) {
      assertThat(stdout).containsPattern("  " + strategy + " +in zone \\d+\\.\\d% \\(before the kill");
    }
  }

  @Test
  void limit_fillsTheCheapestUserTimeFirst() {
    // 12 users, 8 workers of 100 ms per backend, +25 ms to zone b.
    assertThat(Limit.zonesRps(12, 8, 0.1, 0.025, true)).isCloseTo(120.0, within(1e-9)); // all 12 in zone a
    // zone a: 8 workers (80 rps, 8 users); the other 4 users at 125 ms in zone b: 32 rps.
    assertThat(Limit.zonesRps(12, 8, 0.1, 0.025, false)).isCloseTo(112.0, within(1e-9));
    assertThat(Limit.averagedZonesRps(12, 8, 0.1, 0.025)).isCloseTo(120.0 / 3 + 112.0 * 2 / 3, within(1e-9));
    // No penalty: the usual formula.
    int[] c = {8, 8, 8, 8};
    double[] s = {0.05, 0.15, 0.30, 0.50};
    assertThat(Limit.rps(20, c, s, new double[4])).isCloseTo(Limit.rps(20, c, s), within(1e-9));
  }
}
