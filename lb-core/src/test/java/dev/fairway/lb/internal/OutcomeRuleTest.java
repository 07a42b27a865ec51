package dev.fairway.lb.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Every branch of the one response rule: the report first, whatever the status, then the status. */
class OutcomeRuleTest {
  private static final String REPORT = "TEXT application_utilization=0.625, named_metrics.rif=5";

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final LoadReportMeters meters = LoadReportMeters.acquire(registry, "orders");
  private final OutcomeRule rule = new OutcomeRule(OutcomeRule.defaultFailureStatusCodes(), meters);
  private final RecordingPick pick = new RecordingPick();

  @AfterEach
  void release() {
    meters.release();
  }

  private double reports(String result) {
    Counter c = registry.find(LoadReportMeters.NAME).tag("service", "orders").tag("result", result).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void reportPresent_onASuccess_reachesThePick_isCountedParsed_andTheCallSucceeds() {
    assertThat(rule.read(pick, 200, REPORT)).isEqualTo(OutcomeRule.SUCCESS);
    assertThat(pick.reports).containsExactly("0.625/5.0");
    assertThat(reports("parsed")).isEqualTo(1.0);
    assertThat(reports("malformed")).isZero();
  }

  @Test
  void reportAbsent_countsNothing_andRegistersNoMeter() {
    assertThat(rule.read(pick, 204, null)).isEqualTo(OutcomeRule.SUCCESS);
    assertThat(pick.reports).isEmpty();
    assertThat(registry.find(LoadReportMeters.NAME).counters()).isEmpty();
  }

  @Test
  void reportMalformed_isIgnored_andCountedMalformed() {
    assertThat(rule.read(pick, 200, "TEXT named_metrics.rif=-1")).isEqualTo(OutcomeRule.SUCCESS);
    assertThat(rule.read(pick, 200, "JSON {\"rif\": 3}")).isEqualTo(OutcomeRule.SUCCESS);
    assertThat(pick.reports).isEmpty();
    assertThat(reports("malformed")).isEqualTo(2.0);
    assertThat(reports("parsed")).isZero();
  }

  @Test
  void failureCode_isReturned_forEachDefault() {
    for (int code : new int[] {500, 502, 503, 504}) {
      assertThat(rule.read(pick, code, null)).as("status %d", code).isEqualTo(code);
    }
    assertThat(rule.read(pick, 501, null)).isEqualTo(OutcomeRule.SUCCESS); // not implemented: the request's fault
    assertThat(rule.read(pick, 429, null)).isEqualTo(OutcomeRule.SUCCESS);
    assertThat(rule.read(pick, 404, null)).isEqualTo(OutcomeRule.SUCCESS);
  }

  @Test
  void reportOnAFailureStatus_stillReachesThePick_beforeTheStatusDecides() {
    assertThat(rule.read(pick, 503, "TEXT application_utilization=1.5, named_metrics.rif=12")).isEqualTo(503);
    assertThat(pick.reports).containsExactly("1.5/12.0");
    assertThat(reports("parsed")).isEqualTo(1.0);
  }

  @Test
  void noStatus_readsOnlyTheReport() {
    assertThat(rule.read(pick, 0, REPORT)).isEqualTo(OutcomeRule.SUCCESS);
    assertThat(rule.read(pick, -1, null)).isEqualTo(OutcomeRule.SUCCESS);
    assertThat(pick.reports).containsExactly("0.625/5.0");
  }

  @Test
  void configuredCodes_replaceTheDefaults() {
    OutcomeRule only429 = new OutcomeRule(new int[] {429}, LoadReportMeters.NOOP);
    assertThat(only429.read(pick, 429, null)).isEqualTo(429);
    assertThat(only429.read(pick, 503, null)).isEqualTo(OutcomeRule.SUCCESS);
    assertThat(only429.failureStatusCodes()).containsExactly(429);
    OutcomeRule none = new OutcomeRule(new int[0], LoadReportMeters.NOOP);
    assertThat(none.read(pick, 500, REPORT)).isEqualTo(OutcomeRule.SUCCESS);
    assertThat(registry.find(LoadReportMeters.NAME).counters()).isEmpty(); // NOOP meters count nowhere
  }

  @Test
  void isFailureStatus_acceptsAnyInt() {
    assertThat(rule.isFailureStatus(Integer.MIN_VALUE)).isFalse();
    assertThat(rule.isFailureStatus(600)).isFalse();
    assertThat(rule.isFailureStatus(Integer.MAX_VALUE)).isFalse();
    assertThat(rule.isFailureStatus(502)).isTrue();
  }

  @Test
  void codeOutsideTheStatusRange_failsNamingIt() {
    assertThatThrownBy(() -> new OutcomeRule(new int[] {500, 700}, LoadReportMeters.NOOP))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("failureStatusCodes: 700 (expected: 100..599)");
    assertThatThrownBy(() -> new OutcomeRule(new int[] {99}, LoadReportMeters.NOOP))
        .hasMessage("failureStatusCodes: 99 (expected: 100..599)");
  }

  @Test
  void defaults_areOneDefinition_thatCallersCannotChange() {
    int[] defaults = OutcomeRule.defaultFailureStatusCodes();
    assertThat(defaults).containsExactly(500, 502, 503, 504);
    defaults[0] = 200;
    assertThat(OutcomeRule.defaultFailureStatusCodes()).containsExactly(500, 502, 503, 504);
    int[] given = {503};
    OutcomeRule r = new OutcomeRule(given, LoadReportMeters.NOOP);
    given[0] = 200;
    assertThat(r.isFailureStatus(200)).isFalse();
    assertThat(r.isFailureStatus(503)).isTrue();
  }

  @Test
  void failureStatusException_namesStatusAndTarget_withoutAStackTrace() {
    FailureStatusException e = new FailureStatusException(503, "10.0.0.1:8080");
    assertThat(e).hasMessage("HTTP 503 from 10.0.0.1:8080");
    assertThat(e.status()).isEqualTo(503);
    assertThat(e.getStackTrace()).isEmpty();
    assertThat(Failures.classify(e)).isEqualTo(FailureKind.IO); // a status is no connect failure: no instant ejection
  }

  /** Records what reaches {@link Pick#reportLoad}; the rule completes nothing itself. */
  private static final class RecordingPick implements Pick {
    final List<String> reports = new ArrayList<>();

    @Override
    public Target target() {
      return Target.of("10.0.0.1", 8080);
    }

    @Override
    public void success() {
      throw new AssertionError("the rule must not complete the pick");
    }

    @Override
    public void failure(Throwable cause) {
      throw new AssertionError("the rule must not complete the pick");
    }

    @Override
    public void release() {
      throw new AssertionError("the rule must not complete the pick");
    }

    @Override
    public void reportLoad(double utilization, double requestsInFlight) {
      reports.add(utilization + "/" + requestsInFlight);
    }
  }
}
