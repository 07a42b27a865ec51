package dev.fairway.lb.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.MutableTargetSource;
import dev.fairway.lb.Target;
import io.micrometer.core.instrument.MockClock;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The call meters every client integration shares: timing, the bounded target tag, removal with the target. */
class CallMetersTest {
  private final MockClock clock = new MockClock();
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry(SimpleConfig.DEFAULT, clock);
  private final Target a = Target.of("10.0.0.1", 80);
  private final Target b = Target.of("10.0.0.2", 80);
  private final Target c = Target.of("10.0.0.3", 80);

  /** "target outcome" to the total recorded milliseconds, for every fairway.requests series. */
  private Map<String, Double> requestMillis() {
    Map<String, Double> millis = new TreeMap<>();
    for (Timer t : registry.find("fairway.requests").timers()) {
      millis.put(t.getId().getTag("target") + " " + t.getId().getTag("outcome"), t.totalTime(TimeUnit.MILLISECONDS));
    }
    return millis;
  }

  @Test
  void of_aBalancerWithoutRegistry_isNoop() {
    try (LoadBalancer lb = LoadBalancer.builder("orders").targets(a).build()) {
      CallMeters meters = CallMeters.of(lb);

      assertThat(meters).isSameAs(CallMeters.NOOP);
      assertThat(meters.startNanos()).isZero();
      assertThat(meters.loadReports()).isSameAs(LoadReportMeters.NOOP);
    }
  }

  @Test
  void attempt_isTimedByTheRegistrysClock_fromItsStart() {
    try (LoadBalancer lb = LoadBalancer.builder("orders").targets(a).meterRegistry(registry).build()) {
      CallMeters meters = CallMeters.of(lb);
      long start = meters.startNanos();
      clock.add(7, TimeUnit.MILLISECONDS);
      meters.attempt(meters.timers(a), CallMeters.Outcome.SUCCESS, start);
      long noTargetStart = meters.startNanos();
      clock.add(3, TimeUnit.MILLISECONDS);
      meters.noTarget(noTargetStart);

      assertThat(requestMillis()).containsExactly(Map.entry(" no_target", 3.0), Map.entry("10.0.0.1:80 success", 7.0));
    }
  }

  @Test
  void targetsBeyondTheLimit_shareOther_aDepartedTargetsSeriesGo_otherStaysUntilClose() {
    MutableTargetSource source = new MutableTargetSource(List.of(a, b, c));
    LoadBalancer lb = LoadBalancer.builder("orders").targets(source).targetMeterLimit(1).meterRegistry(registry).build();
    CallMeters meters = CallMeters.of(lb);
    String own = lb.targetTag(a).equals(a.id()) ? a.id() : lb.targetTag(b).equals(b.id()) ? b.id() : c.id();
    for (Target t : List.of(a, b, c)) {
      long start = meters.startNanos();
      clock.add(1, TimeUnit.MILLISECONDS);
      meters.attempt(meters.timers(t), CallMeters.Outcome.FAILURE, start);
    }
    assertThat(requestMillis()).containsExactly(Map.entry(own + " failure", 1.0), Map.entry("other failure", 2.0));

    source.set(List.of());
    assertThat(requestMillis()).containsExactly(Map.entry("other failure", 2.0));

    meters.retry(RetryRule.CONNECT_FAILURE);
    meters.leaked();
    lb.close();
    assertThat(registry.getMeters()).isEmpty();
    meters.retry(RetryRule.CONNECT_FAILURE); // after close: nothing new is registered
    meters.attempt(meters.timers(a), CallMeters.Outcome.SUCCESS, meters.startNanos());
    assertThat(registry.getMeters()).isEmpty();
  }
}
