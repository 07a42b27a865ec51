package dev.fairway.lb.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one owner of fairway.load.reports: shared per registry and service, removed by the last holder. */
class LoadReportMetersTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private double count(String service, String result) {
    Counter c = registry.find(LoadReportMeters.NAME).tag("service", service).tag("result", result).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void noRegistry_isNoop_andReleasingItDoesNothing() {
    LoadReportMeters meters = LoadReportMeters.acquire(null, "orders");
    assertThat(meters).isSameAs(LoadReportMeters.NOOP);
    meters.count(LoadReportMeters.Result.PARSED);
    meters.release();
    meters.release();
    assertThat(registry.getMeters()).isEmpty();
  }

  @Test
  void holdersOfOneServiceInOneRegistry_shareOneInstance_otherServicesAndRegistriesDoNot() {
    LoadReportMeters a = LoadReportMeters.acquire(registry, "orders");
    LoadReportMeters b = LoadReportMeters.acquire(registry, "orders");
    LoadReportMeters other = LoadReportMeters.acquire(registry, "payments");
    LoadReportMeters elsewhere = LoadReportMeters.acquire(new SimpleMeterRegistry(), "orders");
    try {
      assertThat(a).isSameAs(b);
      assertThat(other).isNotSameAs(a);
      assertThat(elsewhere).isNotSameAs(a);
    } finally {
      a.release();
      b.release();
      other.release();
      elsewhere.release();
    }
  }

  @Test
  void eachResult_isRegisteredOnItsFirstCount_withTheTagsServiceAndResultOnly() {
    List<Meter.Id> added = new ArrayList<>();
    registry.config().onMeterAdded(m -> added.add(m.getId()));
    LoadReportMeters meters = LoadReportMeters.acquire(registry, "orders");
    assertThat(added).isEmpty();
    meters.count(LoadReportMeters.Result.PARSED);
    meters.count(LoadReportMeters.Result.PARSED);
    meters.count(LoadReportMeters.Result.IMPLAUSIBLE);
    assertThat(added).hasSize(2);
    for (Meter.Id id : added) {
      assertThat(id.getName()).isEqualTo("fairway.load.reports");
      assertThat(id.getTags()).extracting(t -> t.getKey()).containsExactly("result", "service");
    }
    assertThat(count("orders", "parsed")).isEqualTo(2.0);
    assertThat(count("orders", "implausible")).isEqualTo(1.0);
    assertThat(count("orders", "malformed")).isZero();
    meters.release();
  }

  @Test
  void theLastRelease_removesTheCounters_earlierOnesKeepThem() {
    LoadReportMeters first = LoadReportMeters.acquire(registry, "orders");
    LoadReportMeters second = LoadReportMeters.acquire(registry, "orders");
    first.count(LoadReportMeters.Result.IMPLAUSIBLE);
    first.release();
    second.count(LoadReportMeters.Result.IMPLAUSIBLE); // still registered: counts
    assertThat(count("orders", "implausible")).isEqualTo(2.0);
    second.release();
    assertThat(registry.find(LoadReportMeters.NAME).counters()).isEmpty();
    second.count(LoadReportMeters.Result.IMPLAUSIBLE); // a late count after the last release
    assertThat(registry.find(LoadReportMeters.NAME).counters()).isEmpty();
  }

  @Test
  void acquiringAgainAfterTheLastRelease_startsAFreshSet() {
    LoadReportMeters old = LoadReportMeters.acquire(registry, "orders");
    old.count(LoadReportMeters.Result.PARSED);
    old.release();
    LoadReportMeters fresh = LoadReportMeters.acquire(registry, "orders");
    assertThat(fresh).isNotSameAs(old);
    old.release(); // a stale holder releasing again must not take the new holder's meters away
    fresh.count(LoadReportMeters.Result.PARSED);
    assertThat(count("orders", "parsed")).isEqualTo(1.0);
    fresh.release();
    assertThat(registry.find(LoadReportMeters.NAME).counters()).isEmpty();
  }
}
