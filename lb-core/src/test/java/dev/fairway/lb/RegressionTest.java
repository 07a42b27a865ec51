package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.counts;
import static dev.fairway.lb.Fixtures.sequence;
import static dev.fairway.lb.Fixtures.state;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** One test per defect of issue 11, named after the defect; each failed before its fix. */
class RegressionTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  // 1. status() is time-current

  @Test
  void status_showsAWarmingTargetHealthyOnceItsWindowPassed_withoutAnyPick() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    MutableTargetSource source = new MutableTargetSource(List.of(t(1)));
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(source).strategy(Strategy.roundRobin())
        .slowStart(Duration.ofSeconds(10)).meterRegistry(registry).build();
    source.add(t(2));
    assertThat(state(lb, t(2))).isEqualTo(TargetState.WARMING);
    ticker.advanceMillis(10_000);
    assertThat(state(lb, t(2))).isEqualTo(TargetState.HEALTHY);
    assertThat(registry.get("fairway.targets").tag("state", "warming").gauge().value()).isZero();
    assertThat(registry.get("fairway.targets").tag("state", "healthy").gauge().value()).isEqualTo(2);
  }

  @Test
  void status_showsAnEndedEjectionAsBackInService_withoutAnyPick() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(t(1), t(2)).strategy(Strategy.roundRobin()).build();
    lb.pick(null, Set.of(t(2))).failure(new ConnectException("refused"));
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
    ticker.advanceMillis(10_000);
    assertThat(state(lb, t(1))).isEqualTo(TargetState.HEALTHY);
  }

  // 2. half-open admits at most permittedNumberOfCallsInHalfOpenState trial calls

  @Test
  void halfOpen_admitsAtMostThePermittedTrialCallsInFlight() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(t(1), t(2)).strategy(Strategy.roundRobin()).build();
    lb.pick(null, Set.of(t(2))).failure(new ConnectException("refused"));
    ticker.advanceMillis(10_000);
    List<Pick> held = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      held.add(lb.pick());
    }
    List<String> names = new ArrayList<>();
    held.forEach(p -> names.add(Fixtures.name(p.target())));
    assertThat(counts(names)).containsEntry("1", 3).containsEntry("2", 9); // defaults permit 3 trials
    held.stream().filter(p -> p.target().equals(t(1))).findFirst().orElseThrow().release(); // a cancelled trial gives its permit back
    assertThat(counts(sequenceHeld(lb, 4))).containsEntry("1", 1).containsEntry("2", 3);
  }

  private static List<String> sequenceHeld(LoadBalancer lb, int n) throws Exception {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(Fixtures.name(lb.pick().target()));
    }
    return out;
  }

  // 3. one source of truth: a breaker opened by slow calls ejects the target

  @Test
  void slowCallRateThreshold_ejectsTheTarget() throws Exception {
    CircuitBreakerConfig config = CircuitBreakerConfig.custom()
        .slidingWindow(4, 4, CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
        .slowCallDurationThreshold(Duration.ofMillis(100))
        .slowCallRateThreshold(50)
        .build();
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(t(1), t(2)).strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.of(config)).build();
    for (int i = 0; i < 4; i++) {
      Pick p = lb.pick(null, Set.of(t(2)));
      ticker.advanceMillis(i < 2 ? 10 : 200); // 2 of 4 slow: 50%
      p.success();
    }
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
    assertThat(counts(sequence(lb, 4))).containsOnlyKeys("2");
  }

  // 4. completions never wait for a rebuild

  @Test
  void failure_doesNotWaitForARebuildInProgress() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    CountDownLatch inRebuild = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    registry.config().onMeterAdded(m -> {
      if (t(9).id().equals(m.getId().getTag("target"))) {
        inRebuild.countDown();
        try {
          release.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    });
    MutableTargetSource source = new MutableTargetSource(List.of(t(1), t(2), t(3)));
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(source).strategy(Strategy.roundRobin())
        .meterRegistry(registry).build();
    Pick p = lb.pick(null, Set.of(t(2), t(3)));
    Thread discovery = new Thread(() -> source.set(List.of(t(1), t(2), t(3), t(9))));
    discovery.start();
    try {
      assertThat(inRebuild.await(5, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<Void> completion = CompletableFuture.runAsync(() -> p.failure(new ConnectException("refused")));
      assertThatCode(() -> completion.get(2, TimeUnit.SECONDS)).doesNotThrowAnyException();
      assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
    } finally {
      release.countDown();
      discovery.join(5_000);
    }
    assertThat(counts(sequence(lb, 6))).containsOnlyKeys("2", "3", "9");
  }

  // 5. concurrency-limited waiters

  @Test
  void concurrencyLimited_waiterIsWokenByARebuildThatAddsCapacity() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1)));
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(source)
        .strategy(Strategy.concurrencyLimited(1, 1, Duration.ofSeconds(30))).build();
    lb.pick();
    CompletableFuture<Pick> waiter = CompletableFuture.supplyAsync(() -> pickUnchecked(lb));
    awaitQueued(lb);
    assertThat(waiter).isNotDone();
    source.add(t(2));
    assertThat(waiter.get(3, TimeUnit.SECONDS).target()).isEqualTo(t(2));
  }

  @Test
  void concurrencyLimited_waitEndsByTheInjectedTicker() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(t(1))
        .strategy(Strategy.concurrencyLimited(1, 1, Duration.ofSeconds(30))).build();
    lb.pick();
    CompletableFuture<Pick> waiter = CompletableFuture.supplyAsync(() -> pickUnchecked(lb));
    awaitQueued(lb);
    assertThat(waiter).isNotDone();
    ticker.advanceMillis(30_000);
    assertThatThrownBy(() -> waiter.get(3, TimeUnit.SECONDS))
        .hasRootCauseInstanceOf(NoTargetAvailableException.class)
        .hasRootCauseMessage("no target available for service 'svc': all 1 targets are at their hard limit of 1"
            + " calls in flight; waited 30000 ms for a slot");
  }

  @Test
  void concurrencyLimited_newCallerDoesNotOvertakeAWaiter() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1)));
    LoadBalancer lb = LoadBalancer.builder("svc").targets(source)
        .strategy(Strategy.concurrencyLimited(1, 1, Duration.ofMillis(300))).build();
    lb.pick();
    CompletableFuture<Pick> first = CompletableFuture.supplyAsync(() -> pickUnchecked(lb));
    awaitQueued(lb);
    assertThat(first).isNotDone();
    source.add(t(2));
    // The new slot belongs to the caller that waited; this newcomer queues behind it and times out.
    assertThatThrownBy(lb::pick).isInstanceOf(NoTargetAvailableException.class)
        .hasMessageContaining("waited 300 ms for a slot");
    assertThat(first.get(3, TimeUnit.SECONDS).target()).isEqualTo(t(2));
  }

  /**
   * Waits (at most 5 s of real time) until one caller is parked for a slot, so the test goes on only
   * once the waiter really queued, however slowly a loaded machine starts its thread.
   */
  static void awaitQueued(LoadBalancer lb) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (lb.waitingForSlot() == 0 && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(lb.waitingForSlot()).as("a caller waits for a slot").isEqualTo(1);
  }

  static Pick pickUnchecked(LoadBalancer lb) {
    try {
      return lb.pick();
    } catch (NoTargetAvailableException e) {
      throw new IllegalStateException(e);
    }
  }

  // 7. a list update applies whole or not at all

  @Test
  void listUpdate_whoseMeterRemovalFails_isStillAppliedWhole_andTargetsStayManageable() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    AtomicBoolean failOnce = new AtomicBoolean(true);
    registry.config().onMeterRemoved(m -> {
      if (failOnce.getAndSet(false)) {
        throw new IllegalStateException("meter registry broke");
      }
    });
    MutableTargetSource source = new MutableTargetSource(List.of(t(1), t(2), t(3)));
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(source).strategy(Strategy.roundRobin())
        .meterRegistry(registry).build();
    source.set(List.of(t(2), t(3)));
    assertThat(lb.status()).extracting(TargetStatus::target).containsExactly(t(2), t(3));
    source.set(List.of(t(1), t(2), t(3)));
    lb.pick(null, Set.of(t(2), t(3))).failure(new ConnectException("refused"));
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
  }

  // 9. meters

  @Test
  void meters_areNotLeftBehindWhenSubscribingFails() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    TargetSource broken = new TargetSource() {
      @Override
      public List<Target> targets() {
        return List.of(t(1));
      }

      @Override
      public AutoCloseable subscribe(Consumer<List<Target>> listener) {
        throw new IllegalStateException("discovery is down");
      }

      @Override
      public CompletableFuture<List<Target>> whenReady() {
        return new CompletableFuture<>();
      }

      @Override
      public void close() {}
    };
    assertThatThrownBy(() -> LoadBalancer.builder("svc").targets(broken).meterRegistry(registry).build())
        .hasMessage("discovery is down");
    assertThat(registry.getMeters()).isEmpty();
  }

  @Test
  void meters_ofTwoBalancersForOneService_areTheirOwn() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    LoadBalancer one = LoadBalancer.builder("svc").targets(t(1)).meterRegistry(registry).build();
    LoadBalancer two = LoadBalancer.builder("svc").targets(t(1), t(2)).meterRegistry(registry).build();
    assertThat(registry.find("fairway.targets").tag("state", "healthy").gauges())
        .extracting(g -> g.value()).containsExactlyInAnyOrder(1.0, 2.0);
    one.close();
    assertThat(registry.get("fairway.targets").tag("state", "healthy").gauge().value()).isEqualTo(2);
    assertThat(registry.find("fairway.inflight").gauges()).hasSize(2);
    two.close();
    assertThat(registry.getMeters()).isEmpty();
  }

  // 10. build() leaves its builder alone

  @Test
  void build_doesNotChangeItsBuilder_andEachBalancerOwnsItsOwnSource() throws Exception {
    LoadBalancer.Builder builder = LoadBalancer.builder("svc").targets(t(1), t(2));
    LoadBalancer first = builder.build();
    builder.strategy(Strategy.roundRobin()); // not set before build(): still settable
    LoadBalancer second = builder.build();
    assertThat(first.strategy().name()).isEqualTo("least-queueing");
    assertThat(second.strategy().name()).isEqualTo("round-robin");
    first.close();
    List<String> seq = sequence(second, 4); // a rotation from a random start
    assertThat(seq).containsExactlyInAnyOrder("1", "2", "1", "2");
    assertThat(seq.get(1)).isNotEqualTo(seq.get(0));
    assertThat(seq.subList(2, 4)).isEqualTo(seq.subList(0, 2));
  }
}
