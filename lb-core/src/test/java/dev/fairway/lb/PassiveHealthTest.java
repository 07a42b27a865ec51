package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.counts;
import static dev.fairway.lb.Fixtures.name;
import static dev.fairway.lb.Fixtures.sequence;
import static dev.fairway.lb.Fixtures.state;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.core.IntervalFunction;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Passive ejection with Resilience4j breakers, driven by a fake ticker. */
class PassiveHealthTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  LoadBalancer lb(Strategy strategy, PassiveHealth health, Target... targets) {
    return Fixtures.builder(ticker, 7).targets(targets).strategy(strategy).passiveHealth(health).build();
  }

  static Set<Target> allBut(LoadBalancer lb, Target keep) {
    Set<Target> ex = new HashSet<>();
    lb.status().forEach(s -> ex.add(s.target()));
    ex.remove(keep);
    return ex;
  }

  void fail(LoadBalancer lb, Target target, Throwable cause) throws Exception {
    Pick p = lb.pick(null, allBut(lb, target));
    assertThat(p.target()).isEqualTo(target);
    p.failure(cause);
  }

  void succeed(LoadBalancer lb, Target target) throws Exception {
    Pick p = lb.pick(null, allBut(lb, target));
    assertThat(p.target()).isEqualTo(target);
    p.success();
  }

  @Test
  void anInterruptedCall_isNoFailure_itsPickIsReleased_andTheKeyStaysHome() throws Exception {
    LoadBalancer lb = lb(Strategy.keyAffinity(), PassiveHealth.defaults().withConsecutiveFailures(1), t(1), t(2), t(3));
    Target home = lb.pick("k").target();
    lb.status().forEach(s -> assertThat(s.inFlight()).isLessThanOrEqualTo(1));
    for (Throwable interrupted : new Throwable[] {
        new java.io.InterruptedIOException("interrupted"), new IOException("wrapped", new InterruptedException())}) {
      Pick p = lb.pick("k");
      assertThat(p.target()).isEqualTo(home);
      p.failure(interrupted);
      assertThat(state(lb, home)).isEqualTo(TargetState.HEALTHY);
    }
    assertThat(lb.status().stream().filter(s -> s.target().equals(home)).findFirst().orElseThrow().inFlight())
        .isEqualTo(1); // the first pick, still open
    assertThat(lb.pick("k").target()).isEqualTo(home);
  }

  @Test
  void connectException_ejectsOnTheFirstFailure_andTheNextPickNeverReturnsIt() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.defaults(), t(1), t(2), t(3));
    Pick first = lb.pick(null, java.util.Set.of(t(2), t(3)));
    assertThat(first.target()).isEqualTo(t(1));
    first.failure(new ConnectException("Connection refused"));
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
    assertThat(counts(sequence(lb, 300))).containsOnlyKeys("2", "3");
  }

  @Test
  void connectException_wrappedInAnotherException_stillEjects() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.defaults(), t(1), t(2));
    fail(lb, t(1), new IOException("call failed", new ConnectException("refused")));
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
  }

  @Test
  void refusedConnect_afterAnEarlierTryOnAPooledConnection_stillEjects() throws Exception {
    // OkHttp's shape when a server dies: the pooled connection fails first (suppressed), the new
    // connect is refused. Not safe to resend, but the target refuses connections: eject it.
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.defaults(), t(1), t(2));
    ConnectException refused = new ConnectException("Connection refused");
    refused.addSuppressed(new IOException("unexpected end of stream"));
    fail(lb, t(1), refused);
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
  }

  @Test
  void fiveConsecutiveFailures_eject_andASuccessResetsTheCount() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.defaults(), t(1), t(2), t(3), t(4));
    for (int i = 0; i < 4; i++) {
      fail(lb, t(1), new IOException("500"));
    }
    succeed(lb, t(1));
    for (int i = 0; i < 4; i++) {
      fail(lb, t(1), new IOException("500"));
    }
    assertThat(state(lb, t(1))).isEqualTo(TargetState.HEALTHY);
    fail(lb, t(1), new IOException("500"));
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
  }

  @Test
  void ejection_lasts10s_thenHalfOpenTrial_andASuccessRestores() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.defaults(), t(1), t(2));
    fail(lb, t(1), new ConnectException("refused"));
    ticker.advanceMillis(9_999);
    assertThat(counts(sequence(lb, 10))).containsOnlyKeys("2");
    ticker.advanceMillis(1);
    Pick trial = lb.pick(null, Set.of(t(2)));
    assertThat(trial.target()).isEqualTo(t(1));
    assertThat(state(lb, t(1))).isEqualTo(TargetState.HEALTHY);
    trial.success();
    assertThat(counts(sequence(lb, 10))).containsOnlyKeys("1", "2");
    // Fully restored: the next refusal is a first ejection again (10 s, not 20 s).
    fail(lb, t(1), new ConnectException("refused"));
    ticker.advanceMillis(10_000);
    assertThat(counts(sequence(lb, 10))).containsKey("1");
  }

  @Test
  void ejectionTime_doublesOnEachRepeatedEjection_upToFiveMinutes() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.defaults(), t(1), t(2));
    fail(lb, t(1), new ConnectException("refused"));
    long[] expectedSeconds = {10, 20, 40, 80, 160, 300, 300};
    for (int i = 0; i < expectedSeconds.length; i++) {
      long ms = expectedSeconds[i] * 1000;
      ticker.advanceMillis(ms - 1);
      assertThat(counts(sequence(lb, 4))).as("ejection #%d still on", i + 1).containsOnlyKeys("2");
      ticker.advanceMillis(1);
      fail(lb, t(1), new IOException("trial failed")); // half-open trial fails: ejected again, longer
      assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
    }
  }

  @Test
  void failureRateOverTheWindow_ejectsEvenWithoutFiveInARow() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.defaults(), t(1), t(2), t(3), t(4));
    // Alternate failure/success: never 5 in a row, but 50% of the last 10+ calls.
    for (int i = 0; i < 5; i++) {
      succeed(lb, t(1));
      assertThat(state(lb, t(1))).isEqualTo(TargetState.HEALTHY);
      fail(lb, t(1), new IOException("503"));
    }
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
  }

  @Test
  void failureRate_isCountedOverTheTrueLast20Calls_evenAfterLongRunsOfSuccess() throws Exception {
    // After 40 successes the breaker is no longer fed successes (its window is all successes);
    // from the first failure on it is fed everything, so the window stays the true last 20 calls.
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.defaults(), t(1), t(2), t(3), t(4));
    for (int i = 0; i < 40; i++) {
      succeed(lb, t(1));
    }
    for (int pair = 1; pair <= 9; pair++) {
      fail(lb, t(1), new IOException("503"));
      assertThat(state(lb, t(1))).as("after failure %d", pair).isEqualTo(TargetState.HEALTHY);
      succeed(lb, t(1));
    }
    fail(lb, t(1), new IOException("503")); // last 20: 10 failures, 10 successes
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
  }

  @Test
  void failures_doNotCompoundTheLatencyAverage_andAReturningTargetIsMeasuredAfresh() throws Exception {
    // Regression: each failure used to record twice the average, so 30 failures made it 2^30 times
    // larger and least-response-time never went back to the target.
    LoadBalancer lb = lb(Strategy.leastResponseTime(), PassiveHealth.defaults().withConsecutiveFailures(0),
        t(1), t(2), t(3), t(4));
    Pick p = lb.pick(null, allBut(lb, t(1)));
    ticker.advanceMillis(10);
    p.success();
    for (int i = 0; i < 8; i++) { // 9 calls: below the failure-rate minimum of 10
      Pick f = lb.pick(null, allBut(lb, t(1)));
      ticker.advanceMillis(1);
      f.failure(new IOException("500"));
    }
    assertThat(lb.status().get(0).latencyEwmaMillis()).isEqualTo(10.0);
    fail(lb, t(1), new ConnectException("refused"));
    ticker.advanceMillis(10_000);
    assertThat(lb.pick(null, allBut(lb, t(1))).target()).isEqualTo(t(1)); // back on trial
    assertThat(lb.status().get(0).latencyEwmaMillis()).isZero();
  }

  @Test
  void maxEjectionPercent_capsHowManyTargetsAreOut() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.defaults(), t(1), t(2), t(3), t(4));
    fail(lb, t(1), new ConnectException("refused"));
    fail(lb, t(2), new ConnectException("refused"));
    fail(lb, t(3), new ConnectException("refused"));
    assertThat(lb.status()).extracting(TargetStatus::state)
        .containsExactly(TargetState.EJECTED, TargetState.EJECTED, TargetState.HEALTHY, TargetState.HEALTHY);
  }

  @Test
  void panicMode_picksAcrossAllTargetsWhenTooFewAreHealthy_andLeavesWhenTheyReturn() throws Exception {
    io.micrometer.core.instrument.simple.SimpleMeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    LoadBalancer lb = Fixtures.builder(ticker, 7).targets(t(1), t(2), t(3), t(4)).strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.defaults().withMaxEjectionPercent(100)).meterRegistry(registry).build();
    fail(lb, t(1), new ConnectException("refused"));
    fail(lb, t(2), new ConnectException("refused"));
    assertThat(counts(sequence(lb, 8))).containsOnlyKeys("3", "4"); // 2 of 4 healthy: not below 50%
    fail(lb, t(3), new ConnectException("refused"));
    // 1 of 4 healthy: panic, every target gets picks again.
    assertThat(counts(sequence(lb, 8))).containsOnlyKeys("1", "2", "3", "4");
    assertThat(registry.get("fairway.panic").counter().count()).isEqualTo(8);
    ticker.advanceMillis(10_000); // ejections end: all back on trial
    sequence(lb, 8);
    assertThat(lb.status()).extracting(TargetStatus::state).containsOnly(TargetState.HEALTHY);
    fail(lb, t(1), new ConnectException("refused"));
    assertThat(counts(sequence(lb, 9))).containsOnlyKeys("2", "3", "4");
    assertThat(registry.get("fairway.panic").counter().count()).isEqualTo(8); // no panic picks since
  }

  @Test
  void everyTargetRefusing_failsFastAfterEachWasTried() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.defaults(), t(1), t(2), t(3));
    Set<Target> tried = new HashSet<>();
    for (int attempt = 0; attempt < 3; attempt++) {
      Pick p = lb.pick(null, tried);
      tried.add(p.target());
      p.failure(new ConnectException("refused"));
    }
    assertThat(tried).hasSize(3);
    assertThatThrownBy(() -> lb.pick(null, tried))
        .isInstanceOf(NoTargetAvailableException.class)
        .hasMessageContaining("excluded");
  }

  @Test
  void ownBreakerConfig_decidesEjectionAndItsLength() throws Exception {
    CircuitBreakerConfig config = CircuitBreakerConfig.custom()
        .slidingWindow(4, 4, CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
        .failureRateThreshold(50)
        .waitIntervalFunctionInOpenState(IntervalFunction.of(Duration.ofSeconds(3)))
        .build();
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.of(config), t(1), t(2), t(3));
    succeed(lb, t(1));
    succeed(lb, t(1));
    succeed(lb, t(1));
    fail(lb, t(1), new IOException("x"));
    assertThat(state(lb, t(1))).isEqualTo(TargetState.HEALTHY); // 1 of 4 failed
    fail(lb, t(1), new IOException("x")); // 2 of the last 4: 50% reaches the threshold
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
    ticker.advanceMillis(2_999); // the config's 3 s, not the defaults' 10 s
    assertThat(counts(sequence(lb, 6))).containsOnlyKeys("2", "3");
    ticker.advanceMillis(1);
    assertThat(counts(sequence(lb, 3))).containsOnlyKeys("1", "2", "3");
    assertThat(state(lb, t(1))).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void disabled_neverEjects() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), PassiveHealth.disabled(), t(1), t(2));
    for (int i = 0; i < 20; i++) {
      fail(lb, t(1), new ConnectException("refused"));
    }
    assertThat(state(lb, t(1))).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void affinity_failureMovesTheKeyAndEveryOtherKeyOnThatTarget() throws Exception {
    io.micrometer.core.instrument.simple.SimpleMeterRegistry registry = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    LoadBalancer lb = Fixtures.builder(ticker, 7).targets(t(1), t(2), t(3)).strategy(Strategy.keyAffinity())
        .meterRegistry(registry).build();
    java.util.Map<String, Target> placed = new java.util.HashMap<>();
    for (int k = 0; k < 300; k++) {
      Pick p = lb.pick("user-" + k);
      placed.put("user-" + k, p.target());
      p.success();
    }
    Pick p = lb.pick("user-0");
    Target failed = p.target();
    p.failure(new IOException("reset")); // not a refusal: the target stays in service
    assertThat(state(lb, failed)).isEqualTo(TargetState.HEALTHY);
    int moved = 0;
    for (int k = 0; k < 300; k++) {
      Target now = lb.pick("user-" + k).target();
      if (placed.get("user-" + k).equals(failed)) {
        assertThat(now).isNotEqualTo(failed);
        moved++;
      } else {
        assertThat(now).isEqualTo(placed.get("user-" + k));
      }
    }
    assertThat(moved).isGreaterThan(50);
    Target second = lb.pick("user-0").target();
    assertThat(lb.pick("user-0").target()).isEqualTo(second).isNotEqualTo(failed);
    assertThat(registry.get("fairway.affinity.invalidations").counter().count()).isEqualTo(1);
  }

  @Test
  void consistentHash_refusedTargetIsSkippedWhileEjected_andKeysReturnAfterwards() throws Exception {
    LoadBalancer lb = lb(Strategy.consistentHash(), PassiveHealth.defaults(), t(1), t(2), t(3), t(4));
    Pick p = lb.pick("alice");
    Target home = p.target();
    p.failure(new ConnectException("refused"));
    Target elsewhere = lb.pick("alice").target();
    assertThat(elsewhere).isNotEqualTo(home);
    for (int i = 0; i < 10; i++) {
      assertThat(lb.pick("alice").target()).isEqualTo(elsewhere);
    }
    ticker.advanceMillis(10_000);
    Pick back = lb.pick("alice");
    assertThat(back.target()).isEqualTo(home);
    back.success();
  }

  @Test
  void concurrentPicksWhileBreakersTripAndRecover_inFlightEndsAtZero() throws Exception {
    List<Target> targets = Fixtures.targets(6);
    LoadBalancer lb = LoadBalancer.builder("svc").targets(targets.toArray(new Target[0]))
        .strategy(Strategy.leastConnections())
        .passiveHealth(PassiveHealth.of(CircuitBreakerConfig.custom()
            .slidingWindow(10, 5, CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
            .waitIntervalFunctionInOpenState(IntervalFunction.of(Duration.ofMillis(20))).build()))
        .build();
    java.util.concurrent.atomic.AtomicReference<Throwable> escaped = new java.util.concurrent.atomic.AtomicReference<>();
    Thread[] threads = new Thread[4];
    for (int i = 0; i < threads.length; i++) {
      threads[i] = new Thread(() -> {
        java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
        long deadline = System.nanoTime() + 10_000_000_000L;
        for (int n = 0; n < 50_000 && System.nanoTime() < deadline; n++) {
          try {
            Pick p = lb.pick();
            int host = Integer.parseInt(name(p.target()));
            if (host <= 2 && r.nextInt(3) == 0) {
              p.failure(r.nextBoolean() ? new ConnectException("refused") : new IOException("500"));
            } else if (r.nextInt(50) == 0) {
              p.release();
            } else {
              p.success();
            }
          } catch (Throwable e) {
            escaped.compareAndSet(null, e);
          }
        }
      });
      threads[i].start();
    }
    for (Thread t : threads) {
      t.join(30_000);
    }
    assertThat(escaped.get()).isNull();
    assertThat(lb.status()).allMatch(s -> s.inFlight() == 0);
  }
}
