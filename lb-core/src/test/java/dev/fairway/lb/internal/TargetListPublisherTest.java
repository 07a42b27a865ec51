package dev.fairway.lb.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.Target;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class TargetListPublisherTest {
  private static final System.Logger LOG = System.getLogger(TargetListPublisherTest.class.getName());
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final AtomicLong stalenessNanos = new AtomicLong();
  private final DiscoveryMetrics metrics = DiscoveryMetrics.micrometer(registry, "orders", stalenessNanos::get,
      TimeUnit.NANOSECONDS, () -> 0);
  private final TargetListPublisher publisher = new TargetListPublisher("orders", "TestSource(orders)", LOG, metrics);

  private static Target t(int i) {
    return Target.of("10.0.0." + i, 8080);
  }

  private double count(String name) {
    return registry.get(name).tag("service", "orders").counter().count();
  }

  @Test
  void publish_sortsById_callsSubscribersOnlyOnARealChange_andCountsUpdatesAndEmptied() throws Exception {
    List<List<Target>> seen = new ArrayList<>();
    publisher.subscribe(seen::add);
    publisher.publish(List.of(t(2), t(1)), "nothing");
    publisher.publish(List.of(t(1), t(2)), "nothing"); // the same list in another order: no change
    publisher.publish(List.of(), "the backend lists nothing");

    assertThat(seen).containsExactly(List.of(), List.of(t(1), t(2)), List.of());
    assertThat(publisher.targets()).isEmpty();
    assertThat(count("fairway.discovery.updates")).isEqualTo(2);
    assertThat(count("fairway.discovery.emptied")).isEqualTo(1);
    assertThat(publisher.whenReady().get(1, TimeUnit.SECONDS)).containsExactly(t(1), t(2));
  }

  @Test
  void subscriber_seesTheListBeforeTargetsShowsIt_andOneFailingOnTheFirstCallIsNotKept() {
    publisher.publish(List.of(t(1)), "nothing");
    List<List<Target>> shownDuringCall = new ArrayList<>();
    publisher.subscribe(list -> shownDuringCall.add(publisher.targets()));
    assertThatThrownBy(() -> publisher.subscribe(list -> {
      throw new IllegalStateException("boom");
    })).hasMessage("boom");

    publisher.publish(List.of(t(1), t(3)), "nothing"); // the failed one would throw again: not called

    assertThat(shownDuringCall).containsExactly(List.of(t(1)), List.of(t(1)));
    assertThat(publisher.targets()).containsExactly(t(1), t(3));
  }

  @Test
  void failReady_beforeTheFirstList_isReplacedByALaterList() throws Exception {
    publisher.failReady(new IllegalStateException("forbidden"));
    assertThatThrownBy(() -> publisher.whenReady().get(1, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class).hasRootCauseMessage("forbidden");
    publisher.publish(List.of(t(1)), "nothing");
    assertThat(publisher.whenReady().get(1, TimeUnit.SECONDS)).containsExactly(t(1));
  }

  @Test
  void close_cancelsReadiness_dropsSubscribers_andPublishesNothingMore() {
    List<List<Target>> seen = new ArrayList<>();
    publisher.subscribe(seen::add);
    CompletableFuture<List<Target>> ready = publisher.whenReady();
    publisher.close();
    publisher.publish(List.of(t(1)), "nothing");

    assertThat(seen).containsExactly(List.of());
    assertThat(publisher.targets()).isEmpty();
    assertThatThrownBy(() -> publisher.whenReady().get(1, TimeUnit.SECONDS))
        .hasCauseInstanceOf(CancellationException.class).hasMessageContaining("TestSource(orders) closed");
    assertThat(ready).isCompletedExceptionally();
    assertThat(count("fairway.discovery.updates")).isZero();
  }

  @Test
  void metrics_stalenessIsATimeGaugeInSeconds_reasonCountersComeOnFirstUse_andCloseRemovesAll() {
    stalenessNanos.set(TimeUnit.MILLISECONDS.toNanos(2500));
    TimeGauge staleness = registry.get("fairway.discovery.staleness").timeGauge();
    assertThat(staleness.baseTimeUnit()).isEqualTo(TimeUnit.SECONDS);
    assertThat(staleness.value()).isEqualTo(2.5);
    assertThat(registry.get("fairway.discovery.targets").gauge().getId().getBaseUnit()).isEqualTo("targets");
    assertThat(registry.find("fairway.discovery.skipped").counters()).isEmpty();

    metrics.skipped("bad_port");
    metrics.skipped("bad_port");
    metrics.error("connect");
    metrics.throttled("unchanged");
    assertThat(registry.get("fairway.discovery.skipped").tags("service", "orders", "reason", "bad_port").counter()
        .count()).isEqualTo(2);
    assertThat(registry.get("fairway.discovery.errors").tag("reason", "connect").counter().count()).isEqualTo(1);
    assertThat(registry.get("fairway.discovery.throttled").tag("reason", "unchanged").counter().count()).isEqualTo(1);

    metrics.close();
    assertThat(registry.getMeters()).isEmpty();
  }
}
