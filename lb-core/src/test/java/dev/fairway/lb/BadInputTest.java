package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class BadInputTest {
  @Test
  void target_rejectsBadPortsHostsAndWeightsNamingTheValue() {
    assertThatThrownBy(() -> Target.of("h", 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("port: 0 (expected: 1..65535)");
    assertThatThrownBy(() -> Target.of("h", 65536)).hasMessage("port: 65536 (expected: 1..65535)");
    assertThatThrownBy(() -> Target.of(null, 80)).hasMessage("host: null (expected: a host name or IP address)");
    assertThatThrownBy(() -> Target.of(" ", 80)).hasMessage("host: \" \" (expected: a host name or IP address)");
    assertThatThrownBy(() -> Target.of("a b", 80)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> t(1).withWeight(0)).hasMessage("weight: 0 (expected: 1..1000000)");
    assertThatThrownBy(() -> t(1).withWeight(-3)).hasMessage("weight: -3 (expected: 1..1000000)");
    assertThatThrownBy(() -> t(1).withWeight(1_000_001)).hasMessage("weight: 1000001 (expected: 1..1000000)");
    assertThatThrownBy(() -> t(1).withZone(null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> t(1).withId("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> t(1).withMetadata(null)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void target_valueSemantics() {
    Target a = Target.of("10.0.0.1", 80);
    assertThat(a.id()).isEqualTo("10.0.0.1:80");
    assertThat(a.weight()).isEqualTo(1);
    assertThat(a.zone()).isEmpty();
    assertThat(a.metadata()).isEmpty();
    assertThat(a.withWeight(5)).isEqualTo(a).hasSameHashCodeAs(a);
    assertThat(a.withId("x")).isNotEqualTo(a);
    Target v6 = Target.of("::1", 8080);
    assertThat(v6.id()).isEqualTo("[::1]:8080");
    assertThat(v6.authority()).isEqualTo("[::1]:8080");
    assertThat(Target.of("[::1]", 8080).host()).isEqualTo("::1");
    Target m = a.withMetadata(Map.of("k", "v"));
    assertThatThrownBy(() -> m.metadata().put("x", "y")).isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void targetSource_rejectsDuplicatesAndNulls() {
    assertThatThrownBy(() -> TargetSource.of(t(1), t(1)))
        .hasMessage("targets[1]: duplicate id 10.0.0.1:8080 (expected: unique ids)");
    assertThatThrownBy(() -> TargetSource.of(t(1), null)).hasMessage("targets[1]: null (expected: a Target)");
    assertThatThrownBy(() -> new MutableTargetSource(null)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void mutableSource_notifiesOnlyRealChanges() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1)));
    List<List<Target>> seen = new ArrayList<>();
    Consumer<List<Target>> listener = seen::add;
    AutoCloseable sub = source.subscribe(listener);
    source.set(List.of(t(1)));
    source.add(t(1));
    source.add(t(2));
    source.set(Arrays.asList(t(2), t(1))); // same set, other order
    source.add(t(2).withWeight(3));
    source.remove(t(3));
    source.remove(t(1));
    sub.close();
    source.add(t(4));
    assertThat(seen).hasSize(4);
    assertThat(seen.get(3)).containsExactly(t(2));
    assertThat(source.whenReady().get(1, TimeUnit.SECONDS)).containsExactly(t(2), t(4));
  }

  @Test
  void builder_rejectsBadConfigurationNamingTheField() {
    assertThatThrownBy(() -> LoadBalancer.builder(" ")).hasMessage("service: \" \" (expected: a non-blank name)");
    assertThatThrownBy(() -> LoadBalancer.builder("s").build())
        .hasMessage("targets: not set (expected: targets(TargetSource) or targets(Target...))");
    assertThatThrownBy(() -> LoadBalancer.builder("s").targets(new Target[0]))
        .hasMessage("targets: [] (expected: at least one target)");
    assertThatThrownBy(() -> LoadBalancer.builder("s").targets(t(1)).targets(t(2)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("targets was already set to [Target{10.0.0.1:8080}]");
    assertThatThrownBy(() -> LoadBalancer.builder("s").strategy(Strategy.random()).strategy(Strategy.random()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("strategy was already set to random");
    assertThatThrownBy(() -> LoadBalancer.builder("s").panicThreshold(10).panicThreshold(20))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("panicThreshold was already set to 10");
    assertThatThrownBy(() -> LoadBalancer.builder("s").localZone("a").localZone("b"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("localZone was already set to \"a\"");
    assertThatThrownBy(() -> LoadBalancer.builder("s").strategy(null))
        .hasMessage("strategy: null (expected: one of Strategy's factories)");
    assertThatThrownBy(() -> LoadBalancer.builder("s").slowStart(Duration.ofSeconds(-1)))
        .hasMessage("slowStart: PT-1S (expected: 0s..1h)");
    assertThatThrownBy(() -> LoadBalancer.builder("s").panicThreshold(101))
        .hasMessage("panicThreshold: 101 (expected: 0..100)");
    assertThatThrownBy(() -> LoadBalancer.builder("s").localZone(null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> LoadBalancer.builder("s").meterRegistry(null)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> Strategy.concurrencyLimited(0, 5)).hasMessage("softLimit: 0 (expected: 1..1000000)");
    assertThatThrownBy(() -> Strategy.concurrencyLimited(5, 4))
        .hasMessage("hardLimit: 4 (expected: softLimit (5)..1000000)");
    assertThatThrownBy(() -> Strategy.named("fastest")).hasMessageStartingWith("strategy: \"fastest\" (expected: one of");
    assertThatThrownBy(() -> ActiveHealth.of(t -> true, Duration.ZERO)).hasMessage("interval: PT0S (expected: 10ms..1d)");
    assertThatThrownBy(() -> ActiveHealth.of(null, Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ActiveHealth.of(t -> true, Duration.ofSeconds(1)).withHealthyThreshold(0))
        .hasMessage("healthyThreshold: 0 (expected: 1..100)");
    assertThatThrownBy(() -> PassiveHealth.defaults().withMaxEjectionPercent(120))
        .hasMessage("maxEjectionPercent: 120 (expected: 0..100)");
    assertThatThrownBy(() -> PassiveHealth.disabled().withConsecutiveFailures(3))
        .hasMessage("consecutiveFailures: cannot be set on PassiveHealth.disabled()");
    assertThatThrownBy(() -> PassiveHealth.of(null)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void strategyNames_areTheDocumentedOnes() {
    assertThat(Strategy.names()).containsExactlyElementsOf(StrategyNames.ALL);
    for (String name : StrategyNames.ALL) {
      assertThat(Strategy.named(name).name()).isEqualTo(name);
    }
    assertThat(Strategy.roundRobin().name()).isEqualTo("round-robin");
    assertThat(Strategy.concurrencyLimited(1, 2).name()).isEqualTo("concurrency-limited");
  }

  @Test
  void emptyList_failsWithAClearMessage_andRecoversWhenTargetsArrive() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of());
    LoadBalancer lb = LoadBalancer.builder("orders").targets(source).build();
    assertThatThrownBy(lb::pick).isInstanceOf(NoTargetAvailableException.class)
        .hasMessage("no target available for service 'orders': no targets known yet (the target source has not delivered a list)");
    source.set(List.of(t(1)));
    lb.pick().success();
    source.set(List.of());
    assertThatThrownBy(lb::pick)
        .hasMessage("no target available for service 'orders': no targets known (the target source's list is empty)");
  }

  @Test
  void sourceDeliveringDuplicatesOrNulls_isCleanedNotFatal() throws Exception {
    TargetSource sloppy = new TargetSource() {
      @Override
      public List<Target> targets() {
        return Arrays.asList(t(1), null, t(1).withWeight(9), t(2));
      }

      @Override
      public AutoCloseable subscribe(Consumer<List<Target>> listener) {
        listener.accept(targets());
        return () -> {};
      }

      @Override
      public CompletableFuture<List<Target>> whenReady() {
        return CompletableFuture.completedFuture(targets());
      }

      @Override
      public void close() {}
    };
    LoadBalancer lb = LoadBalancer.builder("s").targets(sloppy).strategy(Strategy.roundRobin()).build();
    assertThat(lb.status()).extracting(TargetStatus::target).containsExactly(t(1), t(2));
    assertThat(lb.status().get(0).target().weight()).isEqualTo(1);
  }

  @Test
  void perTargetState_survivesListChanges_forTargetsThatStay() throws Exception {
    Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();
    MutableTargetSource source = new MutableTargetSource(List.of(t(1), t(2)));
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(source).strategy(Strategy.roundRobin()).build();
    Pick done = lb.pick(null, Set.of(t(2)));
    ticker.advanceMillis(40);
    done.success();
    Pick held = lb.pick(null, Set.of(t(2)));
    source.set(List.of(t(3), t(1).withWeight(4), t(4))); // 2 leaves, 3 and 4 join, 1 changes weight
    TargetStatus one = lb.status().get(1);
    assertThat(one.target().weight()).isEqualTo(4);
    assertThat(one.inFlight()).isEqualTo(1);
    assertThat(one.latencyEwmaMillis()).isEqualTo(40.0);
    held.success();
    assertThat(Fixtures.inFlight(lb, t(1))).isZero();
    source.set(List.of(t(3), t(4)));
    source.set(List.of(t(1), t(3), t(4))); // left and came back: a new start
    assertThat(lb.status().get(0).latencyEwmaMillis()).isZero();
  }

  @Test
  void doubleCompletion_countsOnce() throws Exception {
    LoadBalancer lb = LoadBalancer.builder("s").targets(t(1)).build();
    Pick p = lb.pick();
    assertThat(Fixtures.inFlight(lb, t(1))).isEqualTo(1);
    p.success();
    p.success();
    p.failure(new RuntimeException());
    p.release();
    assertThat(Fixtures.inFlight(lb, t(1))).isZero();
    assertThat(lb.status().get(0).state()).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void nullKeysAndNullExcludes_meanNone() throws Exception {
    for (String name : StrategyNames.ALL) {
      LoadBalancer lb = LoadBalancer.builder("s").targets(t(1), t(2)).strategy(Strategy.named(name)).build();
      Pick p = lb.pick(null, null);
      assertThat(p.target()).isIn(t(1), t(2));
      p.success();
      lb.pick(null, Set.of()).release();
    }
  }

  @Test
  void closedBalancer_failsPicksClearly() {
    LoadBalancer lb = LoadBalancer.builder("s").targets(t(1)).build();
    lb.close();
    lb.close();
    assertThatThrownBy(lb::pick).isInstanceOf(NoTargetAvailableException.class)
        .hasMessage("no target available for service 's': the balancer is closed");
  }

  @Test
  void hugeWeightsAndManyTargets_buildEveryStrategy() throws Exception {
    List<Target> many = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      many.add(Target.of("10.2." + (i / 250) + "." + (i % 250), 80).withWeight(Target.MAX_WEIGHT - i));
    }
    for (String name : StrategyNames.ALL) {
      LoadBalancer lb = LoadBalancer.builder("s").targets(many.toArray(new Target[0])).strategy(Strategy.named(name)).build();
      for (int i = 0; i < 100; i++) {
        lb.pick("k" + i).success();
      }
    }
  }
}
