package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.state;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Issue 22, item 5: one truth for health, read the same way by status(), listeners and picks. One
 * test per defect, named after it; each failed before its fix.
 */
class HealthTruthTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  /**
   * A half-open target during slow start reads as WARMING in status(); the listener's "from" was
   * mapped by a second rule that always read it as HEALTHY, so it heard HEALTHY -> EJECTED for a
   * failed trial and HEALTHY -> WARMING for a trial that succeeded, neither of which status() showed.
   */
  @Test
  void listener_seesTheFromAndToThatStatusShows_forAHalfOpenTargetDuringSlowStart() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(t(1), t(2)).strategy(Strategy.roundRobin())
        .slowStart(Duration.ofSeconds(10)).build();
    List<String> events = new ArrayList<>();
    lb.addListener(new LoadBalancerListener() {
      @Override
      public void healthChanged(Target target, TargetState previous, TargetState current, String reason) {
        // Told after the change is applied: status() shows the new state by now.
        events.add(previous + "->" + current + " (status " + state(lb, target) + ")");
      }
    });
    List<TargetState> shown = new ArrayList<>();
    shown.add(state(lb, t(1)));
    lb.pick(null, Set.of(t(2))).failure(new ConnectException("refused")); // ejected for 10 s
    shown.add(state(lb, t(1)));
    ticker.advanceMillis(10_000);
    Pick trial = lb.pick(null, Set.of(t(2))); // the pick applies the end of the ejection: on trial
    shown.add(state(lb, t(1)));
    trial.failure(new ConnectException("refused")); // the trial fails: ejected again, for 20 s
    shown.add(state(lb, t(1)));
    ticker.advanceMillis(20_000);
    trial = lb.pick(null, Set.of(t(2)));
    shown.add(state(lb, t(1)));
    trial.success(); // back, still warming: status() shows no change
    shown.add(state(lb, t(1)));
    ticker.advanceMillis(10_000);
    lb.pick(null, Set.of(t(2))).success(); // the pick applies the end of the warm-up
    shown.add(state(lb, t(1)));

    assertThat(shown).containsExactly(TargetState.HEALTHY, TargetState.EJECTED, TargetState.WARMING,
        TargetState.EJECTED, TargetState.WARMING, TargetState.WARMING, TargetState.HEALTHY);
    assertThat(events).containsExactly(
        "HEALTHY->EJECTED (status EJECTED)",
        "EJECTED->WARMING (status WARMING)",
        "WARMING->EJECTED (status EJECTED)",
        "EJECTED->WARMING (status WARMING)",
        "WARMING->HEALTHY (status HEALTHY)");
    lb.close();
  }

  /**
   * status() reads a target's health as of now, while picks read the last published snapshot. A
   * probe that threw while another thread was applying a change (here: a new target list, held in a
   * listener) made status() show the target UNHEALTHY while the next picks still returned it.
   */
  @Test
  void pick_neverReturnsATargetThatStatusShowsOut_whileTheRebuildIsStillPending() throws Exception {
    CountDownLatch inRebuild = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicBoolean probeThrows = new AtomicBoolean();
    HealthProbe probe = target -> {
      if (target.equals(t(1)) && probeThrows.get()) {
        throw new IllegalStateException("probe blew up");
      }
      return true;
    };
    MutableTargetSource source = new MutableTargetSource(List.of(t(1), t(2), t(3)));
    LoadBalancer lb = LoadBalancer.builder("svc").targets(source).strategy(Strategy.roundRobin())
        .activeHealth(ActiveHealth.of(probe, Duration.ofMillis(20)).withUnhealthyThreshold(1)).build();
    lb.addListener(new LoadBalancerListener() {
      @Override
      public void targetAdded(Target target) {
        inRebuild.countDown();
        try {
          release.await(10, TimeUnit.SECONDS); // bounded: the test releases it in every case
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    });
    Thread discovery = new Thread(() -> source.add(t(9)));
    discovery.start();
    try {
      assertThat(inRebuild.await(5, TimeUnit.SECONDS)).isTrue();
      probeThrows.set(true); // the probe's transition now queues behind the held rebuild
      ActiveHealthTest.await("status() shows 10.0.0.1 unhealthy", () -> state(lb, t(1)) == TargetState.UNHEALTHY);
      List<String> picked = new ArrayList<>();
      for (int i = 0; i < 8; i++) { // two rotations over the four targets of the published snapshot
        Pick p = lb.pick();
        picked.add(Fixtures.name(p.target()));
        p.release();
      }
      assertThat(picked).doesNotContain("1").containsOnly("2", "3", "9");
    } finally {
      release.countDown();
      discovery.join(5_000);
    }
    assertThat(state(lb, t(1))).isEqualTo(TargetState.UNHEALTHY);
    lb.close();
  }

  /** The pick path skips the health read only while no change to out of service can be missing. */
  @Test
  void healthEpoch_isUnsettledWhileAChangeIsUnderWay_andSettledAfter() {
    HealthEpoch epoch = new HealthEpoch();
    assertThat(epoch.mark()).isEqualTo(0).isEqualTo(epoch.started);
    epoch.begin();
    assertThat(epoch.mark()).isEqualTo(HealthEpoch.UNSETTLED);
    epoch.end();
    assertThat(epoch.mark()).isEqualTo(1).isEqualTo(epoch.started);
  }
}
