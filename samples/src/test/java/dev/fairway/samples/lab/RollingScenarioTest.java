package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code rolling} scenario's smoke run at a small time scale: its table and its CSV, with GET and
 * POST counted apart. Nothing here asserts an error count: how many calls a short drain costs
 * depends on the machine's load; the zero-error target is measured in docs/results (rolling).
 */
class RollingScenarioTest {
  @Test
  void rolling_writesATableRowAndACsvRowPerDrain_withErrorsByMethod(@TempDir Path dir) throws Exception {
    LabOptions options = LabOptions.builder().scenarios("rolling").timeScale(0.05).duration(Duration.ofMillis(500))
        .csv(dir.resolve("lab.csv")).build();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    List<RunResult> results = new Lab(options, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)).runAndReport();
    assertThat(results).as("no scenario x strategy run").isEmpty();

    List<String> lines = Files.readAllLines(dir.resolve("lab.csv"));
    assertThat(lines.get(0)).isEqualTo("scenario,drain_ms,propagation_ms,time_scale,seconds,get_calls,get_errors,"
        + "post_calls,post_errors,retries,errors");
    assertThat(lines).hasSize(1 + RollingRun.DRAINS.size());
    for (int i = 0; i < RollingRun.DRAINS.size(); i++) {
      String[] c = lines.get(i + 1).split(",", 11);
      assertThat(c[0]).isEqualTo("rolling");
      assertThat(Long.parseLong(c[1])).isEqualTo(RollingRun.DRAINS.get(i).toMillis());
      assertThat(Long.parseLong(c[2])).isEqualTo(RollingRun.PROPAGATION.toMillis());
      assertThat(c[3]).isEqualTo("0.05");
      assertThat(Double.parseDouble(c[4])).isPositive();
      long getCalls = Long.parseLong(c[5]);
      long getErrors = Long.parseLong(c[6]);
      long postCalls = Long.parseLong(c[7]);
      long postErrors = Long.parseLong(c[8]);
      assertThat(getCalls).as("GET calls").isPositive();
      assertThat(postCalls).as("POST calls").isPositive();
      assertThat(getErrors).isBetween(0L, getCalls);
      assertThat(postErrors).isBetween(0L, postCalls);
      assertThat(Long.parseLong(c[9])).isNotNegative();
      assertThat(c[10]).startsWith("\"").endsWith("\"");
      assertThat(c[10].equals("\"\"")).as("an error summary exactly when there are errors")
          .isEqualTo(getErrors + postErrors == 0);
    }
    String table = out.toString(StandardCharsets.UTF_8);
    assertThat(table).contains("rolling: 20 users, GET and POST").contains("GET errors").contains("POST errors")
        .contains("2000 ms    longer").contains("500 ms     shorter").contains("0 ms       shorter");
  }
}
