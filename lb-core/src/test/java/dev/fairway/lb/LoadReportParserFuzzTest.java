package dev.fairway.lb;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.fairway.lb.LoadReportHeader.Outcome;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * Coverage-guided fuzzing of the ORCA header parser (Jazzer). In a plain test run each method replays
 * the inputs committed under {@code LoadReportParserFuzzTestInputs/<method>/} (and the empty input);
 * {@code .ci/run} fuzzes each for a bounded time with {@code JAZZER_FUZZ=1}. An input that fails is
 * saved there by Jazzer and so becomes a regression test.
 *
 * <p>Inputs are raw bytes read as UTF-8, so the committed seeds are plain header values.
 */
class LoadReportParserFuzzTest {
  /** The decimal grammar the parser documents: sign, digits with an optional fraction, exponent. */
  private static final Pattern DECIMAL = Pattern.compile("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?");

  @FuzzTest(maxDuration = "30s")
  void header(byte[] input) {
    String value = new String(input, StandardCharsets.UTF_8);
    LoadReportParser.Report report = new LoadReportParser.Report();
    Outcome outcome = LoadReportParser.parseInto(value, report); // never throws: anything thrown fails here

    assertThat(outcome).isIn(Outcome.PARSED, Outcome.MALFORMED);
    double[] fields = {report.cpuUtilization, report.memUtilization, report.applicationUtilization,
        report.rpsFractional, report.eps, report.requestsInFlight, report.workers};
    if (outcome == Outcome.MALFORMED) {
      assertThat(java.util.Arrays.stream(fields).allMatch(Double::isNaN)).as("a malformed header keeps nothing")
          .isTrue();
      return;
    }
    assertThat(value.strip()).as("a parsed header starts with TEXT").startsWith("TEXT");
    for (double f : fields) {
      // Kept values are absent, or finite, non-negative and never -0.
      assertThat(Double.isNaN(f) || (f >= 0 && f != Double.POSITIVE_INFINITY && 1 / f > 0))
          .as("field %s in %s", f, value).isTrue();
    }
    double u = report.utilization();
    assertThat(Double.isNaN(u) || (u >= 0 && !Double.isInfinite(u))).as("utilization %s", u).isTrue();

    // The same header through the public entry point reaches a pick without throwing.
    Pick pick = new RecordingPick();
    assertThat(LoadReportHeader.applyTo(pick, value)).isEqualTo(outcome);
  }

  @FuzzTest(maxDuration = "30s")
  void decimal(byte[] input) {
    String s = new String(input, StandardCharsets.UTF_8);
    if (s.isEmpty()) {
      return; // the parser never asks for an empty value: it is malformed before
    }
    double parsed = LoadReportParser.parseDecimal(s, 0, s.length());
    if (!DECIMAL.matcher(s).matches()) {
      assertThat(parsed).as("not a decimal: %s", s).isNaN();
      return;
    }
    // Documented: correctly rounded, as the JDK's reader is, whatever the number of digits.
    assertThat(parsed).as(s).isEqualTo(Double.parseDouble(s));
  }

  /** A pick that only records the report; the parser's contract ends at {@link Pick#reportLoad}. */
  private static final class RecordingPick implements Pick {
    @Override
    public Target target() {
      return Target.of("127.0.0.1", 1);
    }

    @Override
    public void success() {}

    @Override
    public void failure(Throwable cause) {}

    @Override
    public void release() {}
  }
}
